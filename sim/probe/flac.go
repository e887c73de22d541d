package probe

import (
	"encoding/binary"
	"fmt"
	"time"
)

// flacProbeDuration reads the STREAMINFO block of the FLAC stream at base:
// total samples (36 bits) / sample rate (20 bits). It also gives the sample
// rate and channels.
func flacProbeDuration(p *probeReader, base int64, mi *MediaInfo) (time.Duration, error) {
	b, err := p.read(base, 4+4+34)
	if err != nil {
		return 0, err
	}
	if string(b[0:4]) != "fLaC" {
		return 0, ErrUnknownFormat
	}
	if b[4]&0x7F != 0 {
		return 0, probeMalformed("flac", "first metadata block is not STREAMINFO")
	}
	if n := int(b[5])<<16 | int(b[6])<<8 | int(b[7]); n < 34 {
		return 0, probeMalformed("flac", "STREAMINFO too short")
	}
	si := b[8:]
	// min/max block size (2+2), min/max frame size (3+3), then
	// sample rate (20 bits), channels-1 (3), bits-1 (5), total samples (36).
	rate := uint64(si[10])<<12 | uint64(si[11])<<4 | uint64(si[12])>>4
	total := uint64(si[13]&0x0F)<<32 | uint64(binary.BigEndian.Uint32(si[14:18]))
	if rate == 0 {
		return 0, probeMalformed("flac", "zero sample rate")
	}
	mi.AudioCodec, mi.SampleRate, mi.Channels = "flac", int(rate), int(si[12]>>1&7)+1
	if total == 0 {
		return 0, fmt.Errorf("%w: flac: total samples not set", ErrNoDuration)
	}
	return probeDurationOrErr("flac", total, rate)
}
