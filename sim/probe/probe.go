package probe

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"time"
)

// Format names returned by Probe.
const (
	FormatWAV  = "wav"
	FormatMP4  = "mp4"      // ISO BMFF: MP4, MOV, M4A (QuickTime too)
	FormatMKV  = "matroska" // Matroska and WebM
	FormatMP3  = "mp3"
	FormatFLAC = "flac"
)

// MediaInfo is what Probe learns from a container header: the duration, and
// the encoding of the first video and the first audio stream where the header
// gives it. The encoding is best effort (zero means unknown; a broken stream
// header never fails a Probe that found the duration); codec names are
// ffprobe's codec_name.
type MediaInfo struct {
	Format   string        // one of the Format* constants
	Duration time.Duration // > 0 on success

	VideoCodec string  // e.g. "h264", "mpeg4", "mjpeg", "vp8"; "" when there is no video stream
	Width      int     // coded width of the video, in pixels
	Height     int     // coded height of the video, in pixels
	FrameRate  float64 // frames per second of the video (constant or dominant rate)
	AudioCodec string  // e.g. "pcm_s16le", "aac", "mp3", "flac", "opus"
	SampleRate int     // Hz
	Channels   int
}

// ErrUnknownFormat means the bytes are not a recognised media container.
var ErrUnknownFormat = errors.New("audio: unrecognised media format")

// ErrNoDuration means the container is recognised but its duration cannot be determined.
var ErrNoDuration = errors.New("audio: media duration not found")

const (
	// probeHeadLen is how many leading bytes DetectFormat needs.
	probeHeadLen = 64
	// probeWindow is the minimum size of one ReadAt, so that walking headers
	// costs few round trips, and the largest single allocation of Probe.
	probeWindow = 64 << 10
	// probeMaxReads and probeMaxEntries bound the ReadAt calls of one Probe
	// and the boxes, chunks or elements visited inside one container.
	probeMaxReads   = 256
	probeMaxEntries = 4096
	// probeInf stands for "to the end of a file of unknown size".
	probeInf = int64(math.MaxInt64)
)

// DetectFormat recognises a container from its first 64 bytes (fewer may give
// ""): one of the Format* constants, or "" when the bytes are not recognised.
func DetectFormat(head []byte) string {
	switch {
	case len(head) >= 12 && string(head[0:4]) == "RIFF" && string(head[8:12]) == "WAVE":
		return FormatWAV
	case len(head) >= 4 && string(head[0:4]) == "fLaC":
		return FormatFLAC
	case len(head) >= 4 && head[0] == 0x1A && head[1] == 0x45 && head[2] == 0xDF && head[3] == 0xA3:
		return FormatMKV
	case probeIsBMFF(head):
		return FormatMP4
	case len(head) >= 3 && string(head[0:3]) == "ID3":
		return FormatMP3
	}
	if len(head) >= 4 {
		if _, ok := mp3ParseHeader(head[:4]); ok {
			return FormatMP3
		}
	}
	return ""
}

// probeIsBMFF reports whether head starts with an ISO BMFF box: an ftyp box,
// or one of the top-level boxes QuickTime files may start with.
func probeIsBMFF(head []byte) bool {
	if len(head) < 8 {
		return false
	}
	size := binary.BigEndian.Uint32(head[0:4])
	switch string(head[4:8]) {
	case "ftyp":
		return size == 0 || size >= 8
	case "moov", "mdat", "wide", "free", "skip":
		return size <= 1 || size >= 8
	}
	return false
}

// Probe reads the container header from r (size is the total byte length,
// or -1 when unknown). Only the headers are read, in a few ReadAt calls of at
// least 64 KiB; media payload is skipped by size. Errors wrap ErrUnknownFormat
// or ErrNoDuration, or an I/O error; with ErrNoDuration the MediaInfo still
// carries the Format.
func Probe(r io.ReaderAt, size int64) (MediaInfo, error) {
	if r == nil {
		return MediaInfo{}, ErrUnknownFormat
	}
	p := &probeReader{r: r, size: max(size, -1)}
	head, err := p.readUpTo(0, probeHeadLen)
	if err != nil {
		return MediaInfo{}, err
	}
	format := DetectFormat(head)
	var (
		d  time.Duration
		mi MediaInfo
	)
	switch format {
	case FormatWAV:
		d, err = wavProbeDuration(p, &mi)
	case FormatMP4:
		d, err = mp4ProbeDuration(p, &mi)
	case FormatMKV:
		d, err = mkvProbeDuration(p, &mi)
	case FormatMP3:
		format, d, err = mp3ProbeDuration(p, &mi)
	case FormatFLAC:
		d, err = flacProbeDuration(p, 0, &mi)
	default:
		return MediaInfo{}, ErrUnknownFormat
	}
	if errors.Is(err, ErrUnknownFormat) {
		return MediaInfo{}, err
	}
	if err == nil && d <= 0 {
		err = ErrNoDuration
	}
	if err != nil {
		return MediaInfo{Format: format}, err
	}
	mi.Format, mi.Duration = format, d
	return mi, nil
}

// probeReader serves small reads from a cached window over an io.ReaderAt.
// Every fetch allocates a fresh buffer, so slices handed out stay valid.
type probeReader struct {
	r      io.ReaderAt
	mem    []byte // the whole data when it is in memory (then r is nil)
	size   int64  // total length, or -1 when unknown
	buf    []byte
	bufOff int64
	bufEOF bool // buf ends at the end of the file
	reads  int  // ReadAt calls so far
}

func probeTruncated(off int64, n int) error {
	return fmt.Errorf("%w: truncated data (%d bytes at offset %d)", ErrNoDuration, n, off)
}

func probeMalformed(format, what string) error {
	return fmt.Errorf("%w: malformed %s: %s", ErrNoDuration, format, what)
}

// readUpTo returns up to n bytes at off (n <= probeWindow). It returns fewer
// bytes only at the end of the data; it returns an error only for I/O
// failures, too many reads, or an invalid request.
func (p *probeReader) readUpTo(off int64, n int) ([]byte, error) {
	if off < 0 || n < 0 || n > probeWindow || off > probeInf-int64(n) {
		return nil, probeTruncated(off, n)
	}
	if p.size >= 0 {
		if off >= p.size {
			return nil, nil
		}
		n = int(min(int64(n), p.size-off))
	}
	if n == 0 {
		return nil, nil
	}
	if p.mem != nil {
		return p.mem[off : off+int64(n) : off+int64(n)], nil
	}
	if p.buf != nil && off >= p.bufOff && off-p.bufOff <= int64(len(p.buf)) {
		start := int(off - p.bufOff)
		if len(p.buf)-start >= n {
			return p.buf[start : start+n : start+n], nil
		}
		if p.bufEOF {
			return p.buf[start:len(p.buf):len(p.buf)], nil
		}
	}
	if p.reads >= probeMaxReads {
		return nil, fmt.Errorf("%w: too many reads", ErrNoDuration)
	}
	want := min(probeWindow, probeInf-off)
	if p.size >= 0 {
		want = min(want, p.size-off)
	}
	buf := make([]byte, want)
	p.reads++
	m, err := p.r.ReadAt(buf, off)
	if m < 0 || m > len(buf) {
		m = 0
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("audio: probe: read at offset %d: %w", off, err)
	}
	p.buf, p.bufOff = buf[:m], off
	// A short read without error breaks the io.ReaderAt contract; treat
	// it as the end of the data rather than trusting the missing bytes.
	p.bufEOF = m < len(buf) || err != nil || (p.size >= 0 && off+int64(m) >= p.size)
	n = min(n, m)
	return p.buf[:n:n], nil
}

// read returns exactly n bytes at off, or an error wrapping ErrNoDuration
// when the data ends first.
func (p *probeReader) read(off int64, n int) ([]byte, error) {
	b, err := p.readUpTo(off, n)
	if err != nil {
		return nil, err
	}
	if len(b) < n {
		return nil, probeTruncated(off, n)
	}
	return b, nil
}

// probeRatioDuration returns num/den seconds, truncated to the nanosecond; ok
// is false when the result is 0 or overflows, or den is 0.
func probeRatioDuration(num, den uint64) (d time.Duration, ok bool) {
	if num == 0 || den == 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(num, uint64(time.Second))
	if hi >= den {
		return 0, false
	}
	q, _ := bits.Div64(hi, lo, den)
	if q == 0 || q > math.MaxInt64 {
		return 0, false
	}
	return time.Duration(q), true
}

// probeUint reads b as a big-endian unsigned integer (at most 8 bytes).
func probeUint(b []byte) uint64 {
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v
}

// probeDurationOrErr converts num/den seconds, or reports ErrNoDuration.
func probeDurationOrErr(format string, num, den uint64) (time.Duration, error) {
	d, ok := probeRatioDuration(num, den)
	if !ok {
		return 0, fmt.Errorf("%w: %s: invalid duration %d/%d s", ErrNoDuration, format, num, den)
	}
	return d, nil
}
