package probe

import (
	"encoding/binary"
	"fmt"
	"time"
)

// wavProbeDuration walks the RIFF chunks of a WAVE file to its "fmt " and
// "data" chunks and returns data size / byte rate. Chunks are skipped by
// their declared size (plus the pad byte of odd sizes); the sample data is
// never read. The fmt chunk also gives the codec, sample rate and channels.
func wavProbeDuration(p *probeReader, mi *MediaInfo) (time.Duration, error) {
	var (
		byteRate uint64
		haveFmt  bool
		dataSize uint64
		haveData bool
	)
	off := int64(12) // after "RIFF" size "WAVE"
	for i := 0; i < probeMaxEntries; i++ {
		if p.size >= 0 && off > p.size-8 {
			break
		}
		h, err := p.read(off, 8)
		if err != nil {
			return 0, err
		}
		id := string(h[0:4])
		sz := uint64(binary.LittleEndian.Uint32(h[4:8]))
		body := off + 8
		switch id {
		case "fmt ":
			if haveFmt {
				break
			}
			if sz < 16 {
				return 0, probeMalformed("wav", "fmt chunk too short")
			}
			f, err := p.read(body, 16)
			if err != nil {
				return 0, err
			}
			// Same layout for PCM, float and WAVE_FORMAT_EXTENSIBLE.
			sampleRate := uint64(binary.LittleEndian.Uint32(f[4:8]))
			byteRate = uint64(binary.LittleEndian.Uint32(f[8:12]))
			blockAlign := uint64(binary.LittleEndian.Uint16(f[12:14]))
			if byteRate == 0 {
				byteRate = sampleRate * blockAlign
			}
			if byteRate == 0 {
				return 0, probeMalformed("wav", "zero byte rate")
			}
			haveFmt = true
			tag := binary.LittleEndian.Uint16(f[0:2])
			if tag == wavFormatExtensible && sz >= 26 {
				// The sub-format GUID starts with the format tag.
				if x, err := p.read(body+24, 2); err == nil {
					tag = binary.LittleEndian.Uint16(x)
				}
			}
			mi.AudioCodec = wavCodec(tag, binary.LittleEndian.Uint16(f[14:16]))
			mi.SampleRate = int(sampleRate)
			mi.Channels = int(binary.LittleEndian.Uint16(f[2:4]))
		case "data":
			if haveData {
				break
			}
			switch {
			case p.size >= 0 && (sz == wavStreamingSize || sz > uint64(p.size-body)):
				// Streaming writers leave the size unset or too large:
				// the data runs to the end of the file.
				if p.size > body {
					dataSize = uint64(p.size - body)
				}
			case sz == wavStreamingSize:
				return 0, fmt.Errorf("%w: wav: data chunk of unknown size and file size unknown", ErrNoDuration)
			default:
				dataSize = sz
			}
			haveData = true
		}
		if haveFmt && haveData {
			return probeDurationOrErr("wav", dataSize, byteRate)
		}
		if id == "data" && sz == wavStreamingSize {
			break // nothing after a data chunk that runs to the end
		}
		off = body + int64(sz) + int64(sz&1)
	}
	if !haveFmt {
		return 0, fmt.Errorf("%w: wav: no fmt chunk", ErrNoDuration)
	}
	return 0, fmt.Errorf("%w: wav: no data chunk", ErrNoDuration)
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
