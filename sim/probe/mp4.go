package probe

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"time"
)

// mp4Box is one ISO BMFF box header.
type mp4Box struct {
	typ     string
	off     int64 // start of the box header
	dataOff int64 // start of the payload
	end     int64 // end of the box, clamped to its container (may be probeInf)
}

// mp4ReadBox reads the box header at off inside a container ending at limit.
// size 1 means a 64-bit largesize follows; size 0 means "to the end of the
// container" (the file at top level).
func mp4ReadBox(p *probeReader, off, limit int64) (mp4Box, error) {
	h, err := p.read(off, 8)
	if err != nil {
		return mp4Box{}, err
	}
	b := mp4Box{typ: string(h[4:8]), off: off, dataOff: off + 8}
	var size uint64
	switch sz := binary.BigEndian.Uint32(h[0:4]); sz {
	case 0:
		b.end = limit
		return b, nil
	case 1:
		l, err := p.read(off+8, 8)
		if err != nil {
			return mp4Box{}, err
		}
		size = binary.BigEndian.Uint64(l)
		b.dataOff = off + 16
		if size < 16 {
			return mp4Box{}, probeMalformed("mp4", fmt.Sprintf("box %q largesize %d", b.typ, size))
		}
	default:
		size = uint64(sz)
		if size < 8 {
			return mp4Box{}, probeMalformed("mp4", fmt.Sprintf("box %q size %d", b.typ, size))
		}
	}
	if size > uint64(probeInf-off) {
		return mp4Box{}, probeMalformed("mp4", fmt.Sprintf("box %q size %d overflows", b.typ, size))
	}
	b.end = min(off+int64(size), limit)
	return b, nil
}

// mp4Walk calls fn for each box in [start, end) until fn returns stop or an
// error. Boxes are skipped by their size; their payload is not read.
func mp4Walk(p *probeReader, start, end int64, fn func(mp4Box) (stop bool, err error)) error {
	off := start
	for i := 0; off < end && end-off >= 8; i++ {
		if i >= probeMaxEntries {
			return probeMalformed("mp4", "too many boxes")
		}
		if end == probeInf {
			// Size unknown: the data ending at a box boundary is the
			// end of the container, not a truncation.
			if h, err := p.readUpTo(off, 8); err == nil && len(h) == 0 {
				return nil
			}
		}
		b, err := mp4ReadBox(p, off, end)
		if err != nil {
			return err
		}
		stop, err := fn(b)
		if err != nil || stop {
			return err
		}
		if b.end <= off { // cannot happen (size >= 8), but never loop
			return probeMalformed("mp4", "box does not advance")
		}
		off = b.end
	}
	return nil
}

// mp4MaxTracks caps how many trak boxes are examined.
const mp4MaxTracks = 64

// mp4Track is what the duration fallbacks need from a trak box.
type mp4Track struct {
	id        uint32 // tkhd track_ID
	timescale uint64 // mdhd
	duration  uint64 // mdhd, in timescale units
}

// mp4ProbeDuration walks the top-level boxes to moov, wherever it is, and
// reads the duration and then the streams' encoding from it.
func mp4ProbeDuration(p *probeReader, mi *MediaInfo) (time.Duration, error) {
	fileEnd := probeInf
	if p.size >= 0 {
		fileEnd = p.size
	}
	var (
		moov  mp4Box
		found bool
	)
	err := mp4Walk(p, 0, fileEnd, func(b mp4Box) (bool, error) {
		moov, found = b, b.typ == "moov"
		return found, nil
	})
	if err != nil {
		return 0, err
	}
	if !found {
		return 0, fmt.Errorf("%w: mp4: no moov box", ErrNoDuration)
	}
	var traks []mp4Box
	d, err := mp4MoovDuration(p, moov, fileEnd, &traks)
	if err == nil {
		mp4MoovStreams(p, traks, mi)
	}
	return d, err
}

// mp4MoovDuration returns the mvhd duration. When it is 0 (or "unknown")
// it falls back to the longest trak/mdia/mdhd duration. Fragmented files
// (moov has mvex) use mvex/mehd; without mehd, mvhd and mdhd only cover
// the samples in moov, so the movie fragments that follow moov are summed.
// The trak boxes met (at most mp4MaxTracks) are appended to traks.
func mp4MoovDuration(p *probeReader, moov mp4Box, fileEnd int64, traks *[]mp4Box) (time.Duration, error) {
	var (
		movieScale, movieDur uint64
		haveMvhd             bool
		fragmented           bool
		mehdDur              uint64
		trex                 = map[uint32]uint32{} // track_ID -> default_sample_duration
	)
	err := mp4Walk(p, moov.dataOff, moov.end, func(b mp4Box) (bool, error) {
		switch b.typ {
		case "mvhd":
			if haveMvhd {
				break
			}
			var err error
			movieScale, movieDur, err = mp4ReadTimes(p, b)
			haveMvhd = err == nil
			return err != nil, err
		case "trak":
			if len(*traks) < mp4MaxTracks {
				*traks = append(*traks, b)
			}
		case "mvex":
			fragmented = true
			return false, mp4Walk(p, b.dataOff, b.end, func(c mp4Box) (bool, error) {
				switch c.typ {
				case "mehd":
					version, dur, err := mp4VersionedUint(p, c)
					if err == nil && version > 1 {
						err = probeMalformed("mp4", fmt.Sprintf("mehd version %d", version))
					}
					mehdDur = dur
					return err != nil, err
				case "trex":
					if len(trex) >= mp4MaxTracks || c.end-c.dataOff < 16 {
						break
					}
					f, err := p.read(c.dataOff, 16)
					if err != nil {
						return true, err
					}
					trex[binary.BigEndian.Uint32(f[4:8])] = binary.BigEndian.Uint32(f[12:16])
				}
				return false, nil
			})
		}
		return false, nil
	})
	mvhd, mvhdOK := probeRatioDuration(movieDur, movieScale)
	if mvhdOK && !fragmented {
		return mvhd, nil // even if a later box is broken
	}
	if err != nil {
		return 0, err
	}
	if d, ok := probeRatioDuration(mehdDur, movieScale); ok && fragmented {
		return d, nil
	}

	tracks := make([]mp4Track, 0, len(*traks))
	for _, b := range *traks {
		tr, err := mp4ParseTrak(p, b)
		if err != nil {
			return 0, err
		}
		tracks = append(tracks, tr)
	}
	if fragmented {
		return mp4FragmentsDuration(p, moov.end, fileEnd, tracks, trex, mvhd)
	}
	var longest time.Duration
	for _, tr := range tracks {
		if d, ok := probeRatioDuration(tr.duration, tr.timescale); ok && d > longest {
			longest = d
		}
	}
	if longest > 0 {
		return longest, nil
	}
	return 0, fmt.Errorf("%w: mp4: zero duration in mvhd and mdhd", ErrNoDuration)
}

// mp4ParseTrak reads track_ID from tkhd and timescale/duration from
// mdia/mdhd. Missing boxes leave zero values.
func mp4ParseTrak(p *probeReader, trak mp4Box) (mp4Track, error) {
	var tr mp4Track
	err := mp4Walk(p, trak.dataOff, trak.end, func(b mp4Box) (bool, error) {
		switch b.typ {
		case "tkhd":
			// version 0: creation(4) modification(4) track_ID(4);
			// version 1: creation(8) modification(8) track_ID(4).
			idAt := int64(12)
			vf, err := p.read(b.dataOff, 4)
			if err != nil {
				return true, err
			}
			if vf[0] == 1 {
				idAt = 20
			}
			f, err := mp4Field(p, b, idAt, 4)
			if err != nil {
				return true, err
			}
			tr.id = binary.BigEndian.Uint32(f)
		case "mdia":
			return false, mp4Walk(p, b.dataOff, b.end, func(c mp4Box) (bool, error) {
				if c.typ != "mdhd" {
					return false, nil
				}
				var err error
				tr.timescale, tr.duration, err = mp4ReadTimes(p, c)
				return true, err
			})
		}
		return false, nil
	})
	return tr, err
}

// mp4FragmentsDuration walks the top-level boxes after moov and adds up the
// sample durations of every movie fragment (moof/traf: tfdt, trun, with
// defaults from tfhd or trex). The result is the longest track end, and at
// least minimum. The walk reads moof headers only (mdat is skipped by
// size) and is bounded by the read budget: a file with too many fragments
// gives ErrNoDuration rather than a duration that is too short.
func mp4FragmentsDuration(p *probeReader, start, fileEnd int64, tracks []mp4Track, trex map[uint32]uint32, minimum time.Duration) (time.Duration, error) {
	ends := make(map[uint32]uint64, len(tracks)) // track_ID -> end time
	for _, tr := range tracks {
		ends[tr.id] = tr.duration
	}
	err := mp4Walk(p, start, fileEnd, func(b mp4Box) (bool, error) {
		if b.typ != "moof" {
			return false, nil
		}
		return false, mp4Walk(p, b.dataOff, b.end, func(traf mp4Box) (bool, error) {
			if traf.typ != "traf" {
				return false, nil
			}
			return false, mp4ParseTraf(p, traf, ends, trex)
		})
	})
	if err != nil {
		return 0, err
	}
	d := minimum
	for _, tr := range tracks {
		if t, ok := probeRatioDuration(ends[tr.id], tr.timescale); ok && t > d {
			d = t
		}
	}
	if d <= 0 {
		return 0, fmt.Errorf("%w: mp4: fragmented file without duration", ErrNoDuration)
	}
	return d, nil
}

// mp4ParseTraf updates ends[track_ID] with one track fragment: its
// baseMediaDecodeTime (tfdt; else the previous end) plus its sample
// durations. Fragments of tracks not in ends are ignored.
func mp4ParseTraf(p *probeReader, traf mp4Box, ends map[uint32]uint64, trex map[uint32]uint32) error {
	var (
		trackID     uint32
		haveTfhd    bool
		defDuration uint32
		base        uint64
		haveBase    bool
		sum         uint64
	)
	err := mp4Walk(p, traf.dataOff, traf.end, func(b mp4Box) (bool, error) {
		switch b.typ {
		case "tfhd":
			f, err := mp4Field(p, b, 0, 8)
			if err != nil {
				return true, err
			}
			flags := binary.BigEndian.Uint32(f[0:4]) & 0xFFFFFF
			trackID, haveTfhd = binary.BigEndian.Uint32(f[4:8]), true
			defDuration = trex[trackID]
			if flags&0x08 != 0 { // default-sample-duration-present
				at := int64(8)
				if flags&0x01 != 0 { // base-data-offset-present
					at += 8
				}
				if flags&0x02 != 0 { // sample-description-index-present
					at += 4
				}
				d, err := mp4Field(p, b, at, 4)
				if err != nil {
					return true, err
				}
				defDuration = binary.BigEndian.Uint32(d)
			}
		case "tfdt":
			var err error
			if _, base, err = mp4VersionedUint(p, b); err != nil {
				return true, err
			}
			haveBase = true
		case "trun":
			if !haveTfhd {
				return true, probeMalformed("mp4", "trun before tfhd")
			}
			d, err := mp4TrunDuration(p, b, defDuration)
			if err != nil {
				return true, err
			}
			sum = probeSatAdd(sum, d)
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	end, known := ends[trackID]
	if !haveTfhd || !known {
		return nil
	}
	if haveBase {
		end = base
	}
	ends[trackID] = probeSatAdd(end, sum)
	return nil
}

// mp4TrunDuration returns the total sample duration of a trun box.
func mp4TrunDuration(p *probeReader, b mp4Box, defDuration uint32) (uint64, error) {
	size := b.end - b.dataOff
	f, err := mp4Field(p, b, 0, 8)
	if err != nil {
		return 0, err
	}
	flags := binary.BigEndian.Uint32(f[0:4]) & 0xFFFFFF
	count := uint64(binary.BigEndian.Uint32(f[4:8]))
	if flags&0x100 == 0 { // no per-sample durations
		return count * uint64(defDuration), nil
	}
	at := int64(8)
	if flags&0x01 != 0 { // data-offset-present
		at += 4
	}
	if flags&0x04 != 0 { // first-sample-flags-present
		at += 4
	}
	entry := uint64(4 * bits.OnesCount32(flags&0xF00)) // duration, size, flags, cts offset
	if size < at || count > uint64(size-at)/entry {
		return 0, probeMalformed("mp4", "trun sample count exceeds box")
	}
	var sum uint64 // < 2^32 × 2^32: no overflow
	err = mp4Entries(p, b.dataOff+at, int64(count), int64(entry), func(e []byte) {
		sum += uint64(binary.BigEndian.Uint32(e))
	})
	return sum, err
}

// mp4Entries calls fn on each of count table entries of size bytes at off,
// reading them a window at a time.
func mp4Entries(p *probeReader, off, count, size int64, fn func(entry []byte)) error {
	per := probeWindow / size
	for i := int64(0); i < count; i += per {
		chunk, err := p.read(off+i*size, int(min(count-i, per)*size))
		if err != nil {
			return err
		}
		for e := range slices.Chunk(chunk, int(size)) {
			fn(e)
		}
	}
	return nil
}

// probeSatAdd adds without wrapping around.
func probeSatAdd(a, b uint64) uint64 {
	if s := a + b; s >= a {
		return s
	}
	return math.MaxUint64
}

// mp4ReadTimes reads timescale and duration from an mvhd or mdhd full box
// (both share the layout of these fields): after version and flags, w-byte
// creation and modification times, a 4-byte timescale and a w-byte duration,
// w being 4 in version 0 and 8 in version 1. An all-ones duration means
// "unknown" and is returned as 0.
func mp4ReadTimes(p *probeReader, b mp4Box) (timescale, duration uint64, err error) {
	vf, err := mp4Field(p, b, 0, 4)
	if err != nil {
		return 0, 0, err
	}
	if vf[0] > 1 {
		return 0, 0, probeMalformed("mp4", fmt.Sprintf("%s version %d", b.typ, vf[0]))
	}
	w := 4 << vf[0]
	f, err := mp4Field(p, b, 0, 8+3*w)
	if err != nil {
		return 0, 0, err
	}
	timescale = probeUint(f[4+2*w : 8+2*w])
	if duration = probeUint(f[8+2*w:]); duration == math.MaxUint64>>(64-8*w) {
		duration = 0
	}
	return timescale, duration, nil
}

// mp4VersionedUint reads the field that follows the version and flags of
// a full box (mehd, tfdt): 64 bits in version 1, 32 bits otherwise.
func mp4VersionedUint(p *probeReader, b mp4Box) (version byte, v uint64, err error) {
	f, err := mp4Field(p, b, 0, 8)
	if err == nil && f[0] == 1 {
		f, err = mp4Field(p, b, 0, 12)
	}
	if err != nil {
		return 0, 0, err
	}
	return f[0], probeUint(f[4:]), nil
}

// mp4Field reads n bytes at offset at of the payload of b, or reports b as
// too short.
func mp4Field(p *probeReader, b mp4Box, at int64, n int) ([]byte, error) {
	if b.end-b.dataOff < at+int64(n) {
		return nil, probeMalformed("mp4", b.typ+" too short")
	}
	return p.read(b.dataOff+at, n)
}
