package probe

import (
	"encoding/binary"
	"fmt"
	"time"
)

// wavChunks is what the RIFF chunks of a WAVE file declare: a prefix (at
// most 40 bytes, enough for WAVE_FORMAT_EXTENSIBLE) of the first "fmt "
// chunk and where the first "data" chunk starts.
type wavChunks struct {
	fmt      []byte // nil when there is no fmt chunk
	fmtSize  uint64 // declared size of the fmt chunk
	dataOff  int64  // 0 when there is no data chunk
	dataSize uint64 // declared size of the data chunk
}

// wavWalk walks the RIFF chunks of a WAVE file to its first "fmt " and
// "data" chunks. Chunks are skipped by their declared size (plus the pad
// byte of odd sizes); the sample data is never read.
func wavWalk(p *probeReader) (wavChunks, error) {
	var w wavChunks
	off := int64(12) // after "RIFF" size "WAVE"
	for i := 0; i < probeMaxEntries && (w.fmt == nil || w.dataOff == 0); i++ {
		if p.size >= 0 && off > p.size-8 {
			break
		}
		h, err := p.read(off, 8)
		if err != nil {
			return w, err
		}
		id := string(h[0:4])
		sz := uint64(binary.LittleEndian.Uint32(h[4:8]))
		body := off + 8
		switch {
		case id == "fmt " && w.fmt == nil:
			if sz < 16 {
				return w, probeMalformed("wav", "fmt chunk too short")
			}
			f, err := p.readUpTo(body, int(min(sz, 40)))
			if err != nil {
				return w, err
			}
			if len(f) < 16 {
				return w, probeTruncated(body, 16)
			}
			w.fmt, w.fmtSize = f, sz
		case id == "data" && w.dataOff == 0:
			w.dataOff, w.dataSize = body, sz
		}
		if id == "data" && (sz == 0 || sz == wavStreamingSize) {
			break // a data chunk of unset size runs to the end of the file
		}
		off = body + int64(sz) + int64(sz&1)
	}
	return w, nil
}

// wavProbeDuration returns the data size / byte rate of a WAVE file. The
// fmt chunk also gives the codec, sample rate and channels.
func wavProbeDuration(p *probeReader, mi *MediaInfo) (time.Duration, error) {
	w, err := wavWalk(p)
	if err != nil {
		return 0, err
	}
	f := w.fmt
	if f == nil {
		return 0, fmt.Errorf("%w: wav: no fmt chunk", ErrNoDuration)
	}
	// Same layout for PCM, float and WAVE_FORMAT_EXTENSIBLE.
	sampleRate := uint64(binary.LittleEndian.Uint32(f[4:8]))
	byteRate := wavByteRate(f)
	if byteRate == 0 {
		return 0, probeMalformed("wav", "zero byte rate")
	}
	tag := binary.LittleEndian.Uint16(f[0:2])
	if tag == wavFormatExtensible && len(f) >= 26 {
		tag = binary.LittleEndian.Uint16(f[24:26]) // the sub-format GUID starts with the format tag
	}
	mi.AudioCodec = wavCodec(tag, binary.LittleEndian.Uint16(f[14:16]))
	mi.SampleRate = int(sampleRate)
	mi.Channels = int(binary.LittleEndian.Uint16(f[2:4]))
	dataSize := w.dataSize
	switch {
	case w.dataOff == 0:
		return 0, fmt.Errorf("%w: wav: no data chunk", ErrNoDuration)
	case p.size >= 0 && (dataSize == wavStreamingSize || dataSize > uint64(p.size-w.dataOff)):
		// Streaming writers leave the size unset or too large: the data
		// runs to the end of the file.
		dataSize = uint64(max(p.size-w.dataOff, 0))
	case dataSize == wavStreamingSize:
		return 0, fmt.Errorf("%w: wav: data chunk of unknown size and file size unknown", ErrNoDuration)
	}
	return probeDurationOrErr("wav", dataSize, byteRate)
}

// wavByteRate is the byte rate a fmt chunk declares, or when it declares 0,
// its sample rate times its block align.
func wavByteRate(f []byte) uint64 {
	if r := binary.LittleEndian.Uint32(f[8:12]); r != 0 {
		return uint64(r)
	}
	return uint64(binary.LittleEndian.Uint32(f[4:8])) * uint64(binary.LittleEndian.Uint16(f[12:14]))
}

// WAVE format tags.
const (
	wavFormatPCM        = 0x0001
	wavFormatFloat      = 0x0003
	wavFormatALaw       = 0x0006
	wavFormatMuLaw      = 0x0007
	wavFormatExtensible = 0xFFFE
	// wavStreamingSize is the data size of WAV files written to a pipe.
	wavStreamingSize = 0xFFFFFFFF
)

// wavCodecs names the codecs of WAVE format tags and sample sizes as
// ffprobe does.
var wavCodecs = map[[2]uint16]string{
	{wavFormatPCM, 8}: "pcm_u8", {wavFormatPCM, 16}: "pcm_s16le", {wavFormatPCM, 24}: "pcm_s24le", {wavFormatPCM, 32}: "pcm_s32le",
	{wavFormatFloat, 32}: "pcm_f32le", {wavFormatFloat, 64}: "pcm_f64le",
}

// wavCodec names the codec of a WAVE format tag and sample size as ffprobe
// does; other tags are named by their hexadecimal value.
func wavCodec(tag, bits uint16) string {
	switch name, ok := wavCodecs[[2]uint16{tag, bits}]; {
	case ok:
		return name
	case tag == wavFormatALaw:
		return "pcm_alaw"
	case tag == wavFormatMuLaw:
		return "pcm_mulaw"
	}
	return fmt.Sprintf("wav_0x%04x_%dbit", tag, bits)
}
