package probe

// Byte builders for the probe tests: small, valid media headers written in
// Go, so the tests need no binary fixtures.

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"sync"
	"sync/atomic"
)

func probeTestCat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func probeTestBE16(v uint16) []byte { return binary.BigEndian.AppendUint16(nil, v) }
func probeTestBE32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
func probeTestBE64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
func probeTestLE16(v uint16) []byte { return binary.LittleEndian.AppendUint16(nil, v) }
func probeTestLE32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// ---- WAV ----

type probeTestWAVOpts struct {
	rate, channels, bits int
	frames               int     // sample frames of PCM data
	list                 bool    // odd-sized LIST chunk before data (pad byte)
	extensible           bool    // WAVE_FORMAT_EXTENSIBLE fmt chunk
	dataSize             *uint32 // declared data size; nil = the real one
}

func probeTestChunk(id string, body []byte) []byte {
	c := probeTestCat([]byte(id), probeTestLE32(uint32(len(body))), body)
	if len(body)%2 == 1 {
		c = append(c, 0)
	}
	return c
}

func probeTestWAV(o probeTestWAVOpts) []byte {
	blockAlign := o.channels * o.bits / 8
	byteRate := o.rate * blockAlign
	common := probeTestCat(
		probeTestLE16(uint16(o.channels)), probeTestLE32(uint32(o.rate)),
		probeTestLE32(uint32(byteRate)), probeTestLE16(uint16(blockAlign)), probeTestLE16(uint16(o.bits)),
	)
	var fmtBody []byte
	if o.extensible {
		subFormatPCM := []byte{0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71}
		fmtBody = probeTestCat(probeTestLE16(0xFFFE), common,
			probeTestLE16(22), probeTestLE16(uint16(o.bits)), probeTestLE32(0x3), subFormatPCM)
	} else {
		fmtBody = probeTestCat(probeTestLE16(1), common)
	}
	var chunks []byte
	chunks = append(chunks, probeTestChunk("fmt ", fmtBody)...)
	if o.list {
		chunks = append(chunks, probeTestChunk("LIST", []byte("INFOISFT\x07\x00\x00\x00dubsim\x00"))...)
	}
	data := make([]byte, o.frames*blockAlign)
	for i := range data {
		data[i] = byte(i * 7)
	}
	dc := probeTestChunk("data", data)
	if o.dataSize != nil {
		binary.LittleEndian.PutUint32(dc[4:8], *o.dataSize)
	}
	chunks = append(chunks, dc...)
	return probeTestCat([]byte("RIFF"), probeTestLE32(uint32(4+len(chunks))), []byte("WAVE"), chunks)
}

// ---- ISO BMFF ----

func probeTestBox(typ string, payload ...[]byte) []byte {
	body := probeTestCat(payload...)
	return probeTestCat(probeTestBE32(uint32(8+len(body))), []byte(typ), body)
}

// probeTestBoxHeader64 is a box header with a 64-bit largesize.
func probeTestBoxHeader64(typ string, size uint64) []byte {
	return probeTestCat(probeTestBE32(1), []byte(typ), probeTestBE64(size))
}

func probeTestFtyp(major string) []byte {
	return probeTestBox("ftyp", []byte(major), probeTestBE32(0x200), []byte("isomiso2mp41"))
}

// probeTestTimes is the version-dependent creation/modification/timescale/
// duration prefix shared by mvhd and mdhd.
func probeTestTimes(version byte, timescale uint32, duration uint64) []byte {
	if version == 1 {
		return probeTestCat([]byte{1, 0, 0, 0}, probeTestBE64(1), probeTestBE64(2), probeTestBE32(timescale), probeTestBE64(duration))
	}
	return probeTestCat([]byte{0, 0, 0, 0}, probeTestBE32(1), probeTestBE32(2), probeTestBE32(timescale), probeTestBE32(uint32(duration)))
}

func probeTestMvhd(version byte, timescale uint32, duration uint64) []byte {
	// rate, volume, reserved, matrix, pre_defined, next_track_ID
	return probeTestBox("mvhd", probeTestTimes(version, timescale, duration), make([]byte, 80))
}

func probeTestMdhd(version byte, timescale uint32, duration uint64) []byte {
	return probeTestBox("mdhd", probeTestTimes(version, timescale, duration), []byte{0x55, 0xC4, 0, 0})
}

func probeTestTrak(mdhd []byte) []byte {
	return probeTestBox("trak",
		probeTestBox("tkhd", make([]byte, 84)),
		probeTestBox("mdia", mdhd,
			probeTestBox("hdlr", make([]byte, 8), []byte("soun"), make([]byte, 13)),
			probeTestBox("minf", probeTestBox("stbl", make([]byte, 64)))))
}

func probeTestMehd(version byte, duration uint64) []byte {
	if version == 1 {
		return probeTestBox("mehd", []byte{1, 0, 0, 0}, probeTestBE64(duration))
	}
	return probeTestBox("mehd", []byte{0, 0, 0, 0}, probeTestBE32(uint32(duration)))
}

func probeTestTrakID(id uint32, mdhd []byte) []byte {
	return probeTestBox("trak",
		probeTestBox("tkhd", []byte{0, 0, 0, 7}, probeTestBE32(1), probeTestBE32(2), probeTestBE32(id), make([]byte, 72)),
		probeTestBox("mdia", mdhd))
}

func probeTestTrex(id, defaultDuration uint32) []byte {
	return probeTestBox("trex", []byte{0, 0, 0, 0}, probeTestBE32(id), probeTestBE32(1), probeTestBE32(defaultDuration), probeTestBE32(0), probeTestBE32(0))
}

// probeTestTraf builds a track fragment. defaultDuration 0 omits it from
// tfhd; tfdt < 0 omits tfdt (version 1 when tfdt >= 2^32); durations nil
// writes count samples without per-sample durations.
func probeTestTraf(id, defaultDuration uint32, tfdt int64, durations []uint32, count int) []byte {
	var tfhd []byte
	if defaultDuration != 0 {
		// base-data-offset + default-sample-duration present
		tfhd = probeTestBox("tfhd", []byte{0, 0, 0, 0x09}, probeTestBE32(id), probeTestBE64(1234), probeTestBE32(defaultDuration))
	} else {
		tfhd = probeTestBox("tfhd", []byte{0, 0x02, 0, 0}, probeTestBE32(id)) // default-base-is-moof
	}
	parts := [][]byte{tfhd}
	switch {
	case tfdt >= 1<<32:
		parts = append(parts, probeTestBox("tfdt", []byte{1, 0, 0, 0}, probeTestBE64(uint64(tfdt))))
	case tfdt >= 0:
		parts = append(parts, probeTestBox("tfdt", []byte{0, 0, 0, 0}, probeTestBE32(uint32(tfdt))))
	}
	if durations == nil {
		// data-offset + sample-size present
		var entries []byte
		for i := range count {
			entries = append(entries, probeTestBE32(uint32(100+i))...)
		}
		parts = append(parts, probeTestBox("trun", []byte{0, 0, 0x02, 0x01}, probeTestBE32(uint32(count)), probeTestBE32(8), entries))
	} else {
		// data-offset, first-sample-flags, duration, size, cts present
		var entries []byte
		for _, d := range durations {
			entries = append(entries, probeTestCat(probeTestBE32(d), probeTestBE32(500), probeTestBE32(0))...)
		}
		parts = append(parts, probeTestBox("trun", []byte{0, 0, 0x0B, 0x05}, probeTestBE32(uint32(len(durations))), probeTestBE32(8), probeTestBE32(0), entries))
	}
	return probeTestBox("traf", parts...)
}

func probeTestMoof(seq uint32, trafs ...[]byte) []byte {
	return probeTestCat(probeTestBox("moof", append([][]byte{probeTestBox("mfhd", []byte{0, 0, 0, 0}, probeTestBE32(seq))}, trafs...)...),
		probeTestBox("mdat", make([]byte, 200)))
}

func probeTestRepeat(v uint32, n int) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// ---- Matroska / EBML ----

// probeTestVint encodes v as an EBML vint of n bytes (n = 0: shortest).
func probeTestVint(v uint64, n int) []byte {
	if n == 0 {
		n = 1
		for n < 8 && v >= 1<<(7*n)-1 {
			n++
		}
	}
	b := make([]byte, n)
	for i := n - 1; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
	b[0] |= 0x80 >> (n - 1)
	return b
}

func probeTestID(id uint32) []byte {
	b := probeTestBE32(id)
	for len(b) > 1 && b[0] == 0 {
		b = b[1:]
	}
	return b
}

func probeTestEl(id uint32, payload ...[]byte) []byte {
	body := probeTestCat(payload...)
	return probeTestCat(probeTestID(id), probeTestVint(uint64(len(body)), 0), body)
}

// probeTestElSized writes an element whose size vint has n bytes.
func probeTestElSized(id uint32, n int, payload ...[]byte) []byte {
	body := probeTestCat(payload...)
	return probeTestCat(probeTestID(id), probeTestVint(uint64(len(body)), n), body)
}

// probeTestElUnknown writes an element of unknown size (n-byte all-ones vint).
func probeTestElUnknown(id uint32, n int, payload ...[]byte) []byte {
	return probeTestCat(probeTestID(id), probeTestVint(1<<(7*n)-1, n), probeTestCat(payload...))
}

func probeTestEBMLUint(id uint32, v uint64) []byte {
	b := probeTestBE64(v)
	for len(b) > 1 && b[0] == 0 {
		b = b[1:]
	}
	return probeTestEl(id, b)
}

func probeTestEBMLFloat(id uint32, v float64, size int) []byte {
	if size == 4 {
		return probeTestEl(id, probeTestBE32(math.Float32bits(float32(v))))
	}
	return probeTestEl(id, probeTestBE64(math.Float64bits(v)))
}

func probeTestEBMLHeader(docType string) []byte {
	return probeTestEl(mkvIDEBML,
		probeTestEBMLUint(0x4286, 1), // EBMLVersion
		probeTestEBMLUint(0x42F7, 1), // EBMLReadVersion
		probeTestEBMLUint(0x42F2, 4), // EBMLMaxIDLength
		probeTestEBMLUint(0x42F3, 8), // EBMLMaxSizeLength
		probeTestEl(mkvIDDocType, []byte(docType)),
		probeTestEBMLUint(0x4287, 4), // DocTypeVersion
		probeTestEBMLUint(0x4285, 2), // DocTypeReadVersion
	)
}

// probeTestInfo builds an Info element; scale 0 omits TimecodeScale.
func probeTestInfo(scale uint64, duration float64, floatSize int) []byte {
	var parts [][]byte
	if scale != 0 {
		parts = append(parts, probeTestEBMLUint(mkvIDTimecodeScale, scale))
	}
	parts = append(parts,
		probeTestEl(0x4D80, []byte("dubsim")), // MuxingApp
		probeTestEBMLFloat(mkvIDDuration, duration, floatSize),
		probeTestEl(0x5741, []byte("dubsim")), // WritingApp
	)
	return probeTestEl(mkvIDInfo, parts...)
}

func probeTestTracks() []byte {
	return probeTestEl(0x1654AE6B, // Tracks
		probeTestEl(0xAE, // TrackEntry
			probeTestEBMLUint(0xD7, 1),          // TrackNumber
			probeTestEBMLUint(0x83, 2),          // TrackType audio
			probeTestEl(0x86, []byte("A_PCM")))) // CodecID
}

// probeTestSeekHead builds a SeekHead with one entry for Info at pos
// (relative to the Segment payload); the position is written on 8 bytes so
// that the SeekHead's length does not depend on it.
func probeTestSeekHead(pos uint64) []byte {
	return probeTestEl(mkvIDSeekHead,
		probeTestEl(mkvIDSeek,
			probeTestEl(mkvIDSeekID, probeTestID(mkvIDInfo)),
			probeTestEl(mkvIDSeekPosition, probeTestBE64(pos))))
}

func probeTestMKV(docType string, segmentChildren ...[]byte) []byte {
	return probeTestCat(probeTestEBMLHeader(docType), probeTestEl(mkvIDSegment, segmentChildren...))
}

// ---- MP3 ----

// probeTestMP3Header128 is MPEG-1 layer III, 128 kbit/s, 44.1 kHz, joint
// stereo, no padding: frames of 417 bytes.
var probeTestMP3Header128 = []byte{0xFF, 0xFB, 0x90, 0x40}

func probeTestMP3Frames(header []byte, n int) []byte {
	f, ok := mp3ParseHeader(header)
	if !ok {
		panic("bad test header")
	}
	var out []byte
	for range n {
		frame := make([]byte, f.length)
		copy(frame, header)
		out = append(out, frame...)
	}
	return out
}

// probeTestMP3Xing builds a first frame carrying a Xing (or Info) header
// with the frames flag, followed by n ordinary frames.
func probeTestMP3Xing(header []byte, tag string, frames uint32, n int) []byte {
	f, _ := mp3ParseHeader(header)
	first := make([]byte, f.length)
	copy(first, header)
	o := 4 + mp3SideInfoLen(f)
	copy(first[o:], tag)
	binary.BigEndian.PutUint32(first[o+4:], 0x1|0x2) // frames + bytes
	binary.BigEndian.PutUint32(first[o+8:], frames)
	return probeTestCat(first, probeTestMP3Frames(header, n))
}

func probeTestMP3VBRI(header []byte, frames uint32, n int) []byte {
	f, _ := mp3ParseHeader(header)
	first := make([]byte, f.length)
	copy(first, header)
	copy(first[36:], "VBRI")
	binary.BigEndian.PutUint16(first[40:], 1)
	binary.BigEndian.PutUint32(first[46:], uint32(f.length*n))
	binary.BigEndian.PutUint32(first[50:], frames)
	return probeTestCat(first, probeTestMP3Frames(header, n))
}

// probeTestID3 builds an ID3v2.4 tag with a payload of n bytes.
func probeTestID3(n int, footer bool) []byte {
	flags := byte(0)
	if footer {
		flags = 0x10
	}
	size := []byte{byte(n >> 21 & 0x7F), byte(n >> 14 & 0x7F), byte(n >> 7 & 0x7F), byte(n & 0x7F)}
	tag := probeTestCat([]byte("ID3"), []byte{4, 0, flags}, size, make([]byte, n))
	if footer {
		tag = probeTestCat(tag, []byte("3DI"), []byte{4, 0, flags}, size)
	}
	return tag
}

// ---- FLAC ----

func probeTestFLAC(rate uint32, total uint64) []byte {
	si := probeTestCat(
		probeTestBE16(4096), probeTestBE16(4096), // min/max block size
		[]byte{0, 0, 0, 0, 0, 0}, // min/max frame size
		probeTestBE64(uint64(rate)<<44|uint64(1)<<41|uint64(15)<<36|total&(1<<36-1)), // 2 ch, 16 bit
		make([]byte, 16), // MD5
	)
	return probeTestCat([]byte("fLaC"), []byte{0x80, 0, 0, byte(len(si))}, si, []byte{0xFF, 0xF8, 0x69, 0x08})
}

// ---- readers ----

// probeTestSparse is an io.ReaderAt over head + gap zero bytes + tail that
// never allocates the gap, and counts ReadAt calls and bytes served.
type probeTestSparse struct {
	head []byte
	gap  int64
	tail []byte

	mu    sync.Mutex
	calls int
	bytes int64
}

func (s *probeTestSparse) Size() int64 { return int64(len(s.head)) + s.gap + int64(len(s.tail)) }

func (s *probeTestSparse) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, io.ErrUnexpectedEOF
	}
	s.mu.Lock()
	s.calls++
	s.mu.Unlock()
	n := 0
	for n < len(p) {
		pos := off + int64(n)
		switch {
		case pos < int64(len(s.head)):
			n += copy(p[n:], s.head[pos:])
		case pos < int64(len(s.head))+s.gap:
			k := min(int64(len(p)-n), int64(len(s.head))+s.gap-pos)
			clear(p[n : n+int(k)])
			n += int(k)
		case pos < s.Size():
			n += copy(p[n:], s.tail[pos-int64(len(s.head))-s.gap:])
		default:
			s.count(n)
			return n, io.EOF
		}
	}
	s.count(n)
	return n, nil
}

func (s *probeTestSparse) count(n int) {
	s.mu.Lock()
	s.bytes += int64(n)
	s.mu.Unlock()
}

func (s *probeTestSparse) stats() (calls int, bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls, s.bytes
}

// probeTestErrReader fails every ReadAt at or after offset ok.
type probeTestErrReader struct {
	data []byte
	ok   int64
	err  error
}

func (r probeTestErrReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= r.ok {
		return 0, r.err
	}
	return bytes.NewReader(r.data).ReadAt(p, off)
}

// probeTestPeriodic is an endless io.ReaderAt: prefix, then unit (a chunk
// header) repeated every period bytes, zeros in between.
type probeTestPeriodic struct {
	prefix []byte
	unit   []byte
	period int64
	calls  atomic.Int64
}

func (r *probeTestPeriodic) ReadAt(p []byte, off int64) (int, error) {
	r.calls.Add(1)
	clear(p)
	end := off + int64(len(p))
	if off < int64(len(r.prefix)) {
		copy(p, r.prefix[off:])
	}
	// Copy every unit that overlaps [off, end).
	first := max(off-int64(len(r.prefix)), 0) / r.period
	for k := first; ; k++ {
		at := int64(len(r.prefix)) + k*r.period // absolute offset of unit k
		if at >= end {
			break
		}
		for i, c := range r.unit {
			if pos := at + int64(i); pos >= off && pos < end {
				p[pos-off] = c
			}
		}
	}
	return len(p), nil
}

// probeTestCountingReader counts ReadAt calls and bytes read.
type probeTestCountingReader struct {
	r     io.ReaderAt
	calls atomic.Int64
	bytes atomic.Int64
}

func (c *probeTestCountingReader) ReadAt(p []byte, off int64) (int, error) {
	c.calls.Add(1)
	n, err := c.r.ReadAt(p, off)
	c.bytes.Add(int64(n))
	return n, err
}
