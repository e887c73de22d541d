package audio

import (
	"encoding/binary"
	"fmt"
	"time"
)

// wavProbeDuration walks the RIFF chunks of a WAVE file to its "fmt " and
// "data" chunks and returns data size / byte rate. Chunks are skipped by
// their declared size (plus the pad byte of odd sizes); the sample data is
// never read.
func wavProbeDuration(p *probeReader) (time.Duration, error) {
	const streamingSize = 0xFFFFFFFF
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
		case "data":
			if haveData {
				break
			}
			switch {
			case p.size >= 0 && (sz == streamingSize || sz > uint64(p.size-body)):
				// Streaming writers leave the size unset or too large:
				// the data runs to the end of the file.
				if p.size > body {
					dataSize = uint64(p.size - body)
				}
			case sz == streamingSize:
				return 0, fmt.Errorf("%w: wav: data chunk of unknown size and file size unknown", ErrNoDuration)
			default:
				dataSize = sz
			}
			haveData = true
		}
		if haveFmt && haveData {
			return probeDurationOrErr("wav", dataSize, byteRate)
		}
		if id == "data" && sz == streamingSize {
			break // nothing after a data chunk that runs to the end
		}
		off = body + int64(sz) + int64(sz&1)
	}
	if !haveFmt {
		return 0, fmt.Errorf("%w: wav: no fmt chunk", ErrNoDuration)
	}
	return 0, fmt.Errorf("%w: wav: no data chunk", ErrNoDuration)
}
