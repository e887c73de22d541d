package probe

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"
)

// mp3Frame is a decoded MPEG audio frame header.
type mp3Frame struct {
	version    byte // 3 = MPEG-1, 2 = MPEG-2, 0 = MPEG-2.5 (header bits)
	layer      int  // 1, 2 or 3
	bitrate    int  // kbit/s
	sampleRate int  // Hz
	samples    int  // samples per frame
	length     int  // frame length in bytes, padding included
	mono       bool
}

// Bitrates in kbit/s by [table][bitrate index]; index 0 (free format) and 15
// (invalid) are rejected.
var mp3Bitrates = [5][16]int{
	{0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448, 0}, // MPEG-1 layer I
	{0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 0},    // MPEG-1 layer II
	{0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 0},     // MPEG-1 layer III
	{0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256, 0},    // MPEG-2/2.5 layer I
	{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 0},         // MPEG-2/2.5 layers II, III
}

// mp3SampleRates by [version bits][sample-rate index].
var mp3SampleRates = [4][3]int{
	{11025, 12000, 8000},  // MPEG-2.5
	{0, 0, 0},             // reserved
	{22050, 24000, 16000}, // MPEG-2
	{44100, 48000, 32000}, // MPEG-1
}

// mp3ParseHeader decodes a 4-byte MPEG audio frame header (sync 0xFFE,
// valid version, layer, bitrate and sample-rate indexes).
func mp3ParseHeader(h []byte) (mp3Frame, bool) {
	if len(h) < 4 || h[0] != 0xFF || h[1]&0xE0 != 0xE0 {
		return mp3Frame{}, false
	}
	version := (h[1] >> 3) & 3
	layerBits := (h[1] >> 1) & 3
	brIndex := h[2] >> 4
	srIndex := (h[2] >> 2) & 3
	if version == 1 || layerBits == 0 || brIndex == 0 || brIndex == 15 || srIndex == 3 {
		return mp3Frame{}, false
	}
	f := mp3Frame{
		version:    version,
		layer:      4 - int(layerBits),
		sampleRate: mp3SampleRates[version][srIndex],
		mono:       h[3]>>6 == 3,
	}
	mpeg1 := version == 3
	table := min(f.layer, 2) + 2 // MPEG-2/2.5: layer I, or layers II and III
	if mpeg1 {
		table = f.layer - 1
	}
	f.bitrate = mp3Bitrates[table][brIndex]
	padding := int(h[2]>>1) & 1
	switch {
	case f.layer == 1:
		f.samples = 384
		f.length = (12*f.bitrate*1000/f.sampleRate + padding) * 4
	case f.layer == 2 || mpeg1:
		f.samples = 1152
		f.length = 144*f.bitrate*1000/f.sampleRate + padding
	default: // layer III, MPEG-2/2.5
		f.samples = 576
		f.length = 72*f.bitrate*1000/f.sampleRate + padding
	}
	return f, true
}

// mp3SideInfoLen is the size of the layer III side information that
// follows the frame header (and precedes a Xing/Info header).
func mp3SideInfoLen(f mp3Frame) int {
	switch {
	case f.version == 3 && f.mono:
		return 17
	case f.version == 3:
		return 32
	case f.mono:
		return 9
	default:
		return 17
	}
}

// mp3ProbeDuration skips ID3v2 tags, finds the first MPEG audio frame, and
// computes the duration from a Xing/Info or VBRI header, or else from the
// bitrate and the file size (CBR). A FLAC stream behind an ID3v2 tag is
// recognised too, hence the returned format.
func mp3ProbeDuration(p *probeReader, mi *MediaInfo) (string, time.Duration, error) {
	start := int64(0)
	for i := 0; i < 16; i++ {
		h, err := p.readUpTo(start, 10)
		if err != nil {
			return FormatMP3, 0, err
		}
		if len(h) < 10 || string(h[0:3]) != "ID3" {
			break
		}
		// Synchsafe size: 4 × 7 bits, excluding the 10-byte header and
		// the optional 10-byte footer.
		size := int64(h[6]&0x7F)<<21 | int64(h[7]&0x7F)<<14 | int64(h[8]&0x7F)<<7 | int64(h[9]&0x7F)
		start += 10 + size
		if h[5]&0x10 != 0 {
			start += 10
		}
	}
	b, err := p.readUpTo(start, probeWindow)
	if err != nil {
		return FormatMP3, 0, err
	}
	if len(b) >= 4 && string(b[0:4]) == "fLaC" {
		d, err := flacProbeDuration(p, start, mi)
		return FormatFLAC, d, err
	}

	pos := -1
	var fr mp3Frame
	for i := 0; i+4 <= len(b); {
		j := bytes.IndexByte(b[i:len(b)-3], 0xFF)
		if j < 0 {
			break
		}
		i += j
		f, ok := mp3ParseHeader(b[i : i+4])
		if ok && i > 0 {
			// Away from where the audio should start, demand that the
			// next frame header confirms this one (or that this frame
			// is the last one in the file).
			switch next := i + f.length; {
			case next+4 <= len(b):
				g, ok2 := mp3ParseHeader(b[next : next+4])
				ok = ok2 && g.version == f.version && g.layer == f.layer && g.sampleRate == f.sampleRate
			default:
				ok = next == len(b) && len(b) < probeWindow
			}
		}
		if ok {
			pos, fr = i, f
			break
		}
		i++
	}
	if pos < 0 {
		return FormatMP3, 0, fmt.Errorf("%w: mp3: no MPEG audio frame found", ErrNoDuration)
	}
	frameOff := start + int64(pos)
	mi.AudioCodec = [4]string{"", "mp1", "mp2", "mp3"}[fr.layer]
	mi.SampleRate, mi.Channels = fr.sampleRate, 2
	if fr.mono {
		mi.Channels = 1
	}

	if fr.layer == 3 {
		x, err := p.readUpTo(frameOff, 64)
		if err != nil {
			return FormatMP3, 0, err
		}
		var frames uint32
		// Xing (VBR) or Info (CBR) header after the side information.
		if o := 4 + mp3SideInfoLen(fr); len(x) >= o+12 {
			if tag := string(x[o : o+4]); (tag == "Xing" || tag == "Info") && binary.BigEndian.Uint32(x[o+4:o+8])&1 != 0 {
				frames = binary.BigEndian.Uint32(x[o+8 : o+12])
			}
		}
		// VBRI (Fraunhofer) header at a fixed 32 bytes after the header:
		// "VBRI" version(2) delay(2) quality(2) bytes(4) frames(4).
		if frames == 0 && len(x) >= 36+18 && string(x[36:40]) == "VBRI" {
			frames = binary.BigEndian.Uint32(x[50:54])
		}
		if frames > 0 {
			d, err := probeDurationOrErr("mp3", uint64(frames)*uint64(fr.samples), uint64(fr.sampleRate))
			return FormatMP3, d, err
		}
	}

	// CBR: the rest of the file at the first frame's bitrate.
	if p.size < 0 {
		return FormatMP3, 0, fmt.Errorf("%w: mp3: no Xing/VBRI header and file size unknown", ErrNoDuration)
	}
	if p.size <= frameOff {
		return FormatMP3, 0, probeTruncated(frameOff, 4)
	}
	d, err := probeDurationOrErr("mp3", uint64(p.size-frameOff), uint64(fr.bitrate)*125) // bytes/s
	return FormatMP3, d, err
}
