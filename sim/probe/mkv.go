package probe

import (
	"fmt"
	"math"
	"math/bits"
	"strings"
	"time"
)

// Matroska / EBML element IDs (with their length-marker bits, as written).
const (
	mkvIDEBML          = 0x1A45DFA3
	mkvIDDocType       = 0x4282
	mkvIDSegment       = 0x18538067
	mkvIDSeekHead      = 0x114D9B74
	mkvIDSeek          = 0x4DBB
	mkvIDSeekID        = 0x53AB
	mkvIDSeekPosition  = 0x53AC
	mkvIDInfo          = 0x1549A966
	mkvIDTimecodeScale = 0x2AD7B1
	mkvIDDuration      = 0x4489
	mkvIDCluster       = 0x1F43B675

	mkvDefaultTimecodeScale = 1_000_000 // ns
)

// mkvElem is one EBML element header.
type mkvElem struct {
	id      uint32
	off     int64 // start of the element ID
	dataOff int64 // start of the payload
	size    int64 // payload size; meaningless when unknown
	unknown bool  // size is "unknown" (all value bits set)
}

// end returns the end of the element's payload.
func (e mkvElem) end() int64 { return e.dataOff + e.size }

// mkvReadElem reads an element header (ID of 1-4 bytes, size vint of 1-8
// bytes) at off.
func mkvReadElem(p *probeReader, off int64) (mkvElem, error) {
	b, err := p.readUpTo(off, 12)
	if err != nil {
		return mkvElem{}, err
	}
	if len(b) == 0 {
		return mkvElem{}, probeTruncated(off, 2)
	}
	idLen := mkvVintLen(b[0])
	if idLen == 0 || idLen > 4 {
		return mkvElem{}, probeMalformed("matroska", fmt.Sprintf("element ID at offset %d", off))
	}
	if len(b) < idLen+1 {
		return mkvElem{}, probeTruncated(off, idLen+1)
	}
	id := uint32(probeUint(b[:idLen]))
	sizeLen := mkvVintLen(b[idLen])
	if sizeLen == 0 {
		return mkvElem{}, probeMalformed("matroska", fmt.Sprintf("element size at offset %d", off))
	}
	if len(b) < idLen+sizeLen {
		return mkvElem{}, probeTruncated(off, idLen+sizeLen)
	}
	v := probeUint(b[idLen:idLen+sizeLen]) & (math.MaxUint64 >> (64 - 7*sizeLen))
	e := mkvElem{id: id, off: off, dataOff: off + int64(idLen+sizeLen)}
	if v == 1<<(7*sizeLen)-1 {
		e.unknown = true
		return e, nil
	}
	// v < 2^56, but the offset may already be large.
	if v > uint64(probeInf-e.dataOff) {
		return mkvElem{}, probeMalformed("matroska", fmt.Sprintf("element size %d overflows", v))
	}
	e.size = int64(v)
	return e, nil
}

// mkvVintLen returns the length of a vint from its first byte (1-8), or 0
// for the invalid first byte 0x00.
func mkvVintLen(first byte) int {
	if first == 0 {
		return 0
	}
	return bits.LeadingZeros8(first) + 1
}

// mkvWalk calls fn for each child element in [start, end) until fn returns
// stop or an error. Children of unknown size are passed to fn, which must
// stop the walk (it cannot be skipped).
func mkvWalk(p *probeReader, start, end int64, fn func(mkvElem) (stop bool, err error)) error {
	off := start
	for i := 0; off < end; i++ {
		if i >= probeMaxEntries {
			return probeMalformed("matroska", "too many elements")
		}
		e, err := mkvReadElem(p, off)
		if err != nil {
			return err
		}
		stop, err := fn(e)
		if err != nil || stop {
			return err
		}
		if e.unknown {
			return probeMalformed("matroska", fmt.Sprintf("element 0x%X of unknown size", e.id))
		}
		off = e.end() // > off: the header is at least 2 bytes
	}
	return nil
}

// mkvChildren calls fn for each child of the master element e until fn
// returns an error or a child of unknown size has been passed to it.
func mkvChildren(p *probeReader, e mkvElem, fn func(c mkvElem) error) error {
	return mkvWalk(p, e.dataOff, e.end(), func(c mkvElem) (bool, error) {
		err := fn(c)
		return c.unknown || err != nil, err
	})
}

// mkvReadUint reads an unsigned integer element payload (0-8 bytes).
func mkvReadUint(p *probeReader, e mkvElem) (uint64, error) {
	if e.unknown || e.size > 8 {
		return 0, probeMalformed("matroska", fmt.Sprintf("integer element 0x%X of size %d", e.id, e.size))
	}
	b, err := p.read(e.dataOff, int(e.size))
	return probeUint(b), err
}

// mkvProbeDuration parses the EBML header, finds the Segment and its Info
// element, and returns Duration * TimecodeScale; then it reads the streams'
// encoding from Tracks (mkvSegmentTracks).
func mkvProbeDuration(p *probeReader, mi *MediaInfo) (time.Duration, error) {
	hdr, err := mkvReadElem(p, 0)
	if err != nil {
		return 0, err
	}
	if hdr.id != mkvIDEBML || hdr.unknown {
		return 0, probeMalformed("matroska", "EBML header")
	}
	docType := "matroska" // the EBML default
	err = mkvWalk(p, hdr.dataOff, hdr.end(), func(e mkvElem) (bool, error) {
		if e.id != mkvIDDocType {
			return false, nil
		}
		if e.unknown || e.size > 64 {
			docType = ""
			return true, nil
		}
		b, err := p.read(e.dataOff, int(e.size))
		if err != nil {
			return true, err
		}
		docType = strings.TrimRight(string(b), "\x00")
		return true, nil
	})
	if err != nil {
		return 0, err
	}
	if docType != "matroska" && docType != "webm" {
		return 0, fmt.Errorf("%w: EBML DocType %q", ErrUnknownFormat, docType)
	}

	// Level 0: skip Void/CRC-32 and the like up to the Segment.
	var seg mkvElem
	err = mkvWalk(p, hdr.end(), probeInf, func(e mkvElem) (bool, error) {
		seg = e
		return e.id == mkvIDSegment, nil
	})
	if err != nil {
		return 0, err
	}
	if seg.id != mkvIDSegment {
		return 0, fmt.Errorf("%w: matroska: no Segment", ErrNoDuration)
	}
	segEnd := probeInf
	switch {
	case !seg.unknown:
		segEnd = seg.end()
	case p.size >= 0:
		segEnd = p.size
	}
	l1 := mkvLevel1{seekPos: -1, resumeAt: -1}
	d, err := mkvSegmentDuration(p, seg.dataOff, segEnd, &l1)
	if err == nil {
		mkvSegmentTracks(p, seg.dataOff, segEnd, &l1, mi)
	}
	return d, err
}

// mkvSegmentDuration scans the top-level (level 1) elements of a Segment for
// Info. A SeekHead entry for Info is followed at once (Info often comes
// after Tracks or even after the Clusters); otherwise elements are skipped
// by size, and an unknown-size Cluster ends the scan. On the way it notes in
// l1 where Tracks is.
func mkvSegmentDuration(p *probeReader, segData, segEnd int64, l1 *mkvLevel1) (d time.Duration, err error) {
	seekTried, found := false, false
	err = mkvWalk(p, segData, segEnd, func(e mkvElem) (bool, error) {
		switch e.id {
		case mkvIDInfo:
			if !e.unknown {
				l1.resumeAt = e.end()
			}
			found = true
			d, err = mkvInfoDuration(p, e)
			return true, err
		case mkvIDTracks:
			if !l1.found && !e.unknown {
				l1.tracks, l1.found = e, true
			}
		case mkvIDSeekHead:
			if seekTried || e.unknown {
				break
			}
			if l1.seekPos < 0 {
				if pos, err := mkvSeekPosition(p, e, mkvIDTracks); err == nil {
					l1.seekPos = pos
				}
			}
			pos, err := mkvSeekPosition(p, e, mkvIDInfo)
			if err != nil {
				return true, err
			}
			if pos < 0 || pos > probeInf-segData || segData+pos == e.off {
				break
			}
			seekTried = true
			if info, err := mkvReadElem(p, segData+pos); err == nil && info.id == mkvIDInfo {
				found = true
				d, err = mkvInfoDuration(p, info)
				return true, err
			}
			// A stale SeekHead: keep scanning in order.
		}
		// After an unknown-size Cluster (live streams) or any other
		// element whose end cannot be known, the header part is over.
		return e.unknown, nil
	})
	if err == nil && !found {
		err = fmt.Errorf("%w: matroska: no Info element", ErrNoDuration)
	}
	return d, err
}

// mkvSeekPosition returns the Segment-relative position of the level-1
// element want listed in a SeekHead, or -1.
func mkvSeekPosition(p *probeReader, seekHead mkvElem, want uint32) (int64, error) {
	pos := int64(-1)
	err := mkvWalk(p, seekHead.dataOff, seekHead.end(), func(seek mkvElem) (bool, error) {
		if seek.id != mkvIDSeek {
			return false, nil
		}
		if seek.unknown {
			return true, nil
		}
		var (
			isWanted bool
			at       uint64
			haveAt   bool
		)
		err := mkvWalk(p, seek.dataOff, seek.end(), func(c mkvElem) (bool, error) {
			switch c.id {
			case mkvIDSeekID:
				if c.unknown || c.size > 8 {
					return true, nil
				}
				id, err := mkvReadUint(p, c)
				if err != nil {
					return true, err
				}
				isWanted = id == uint64(want)
			case mkvIDSeekPosition:
				v, err := mkvReadUint(p, c)
				if err != nil {
					return true, err
				}
				at, haveAt = v, true
			}
			return c.unknown, nil
		})
		if err != nil {
			return true, err
		}
		if isWanted && haveAt && at <= math.MaxInt64 {
			pos = int64(at)
			return true, nil
		}
		return false, nil
	})
	return pos, err
}

// mkvInfoDuration reads TimecodeScale and Duration from an Info element.
func mkvInfoDuration(p *probeReader, info mkvElem) (time.Duration, error) {
	if info.unknown {
		return 0, probeMalformed("matroska", "Info of unknown size")
	}
	scale := uint64(mkvDefaultTimecodeScale)
	dur := math.NaN()
	err := mkvChildren(p, info, func(e mkvElem) (err error) {
		switch e.id {
		case mkvIDTimecodeScale:
			var v uint64
			if v, err = mkvReadUint(p, e); v != 0 {
				scale = v
			}
		case mkvIDDuration:
			dur, err = mkvReadFloat(p, e)
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	if math.IsNaN(dur) {
		return 0, fmt.Errorf("%w: matroska: Info has no Duration", ErrNoDuration)
	}
	ns := dur * float64(scale)
	if !(ns >= 1 && ns < math.MaxInt64) {
		return 0, fmt.Errorf("%w: matroska: invalid Duration %g × %d ns", ErrNoDuration, dur, scale)
	}
	return time.Duration(math.Round(ns)), nil
}
