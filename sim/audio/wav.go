package audio

import (
	"encoding/binary"
	"io"
	"math"
)

const wavHeaderSize = 44

// WAVHeader returns the canonical 44-byte RIFF/WAVE header of a PCM file
// (format 1, a 16-byte fmt chunk, then the data chunk header) whose data
// chunk holds dataBytes bytes. The RIFF size saturates at 2^32-1 when
// dataBytes exceeds 2^32-1-36.
func WAVHeader(sampleRate, channels, bitsPerSample int, dataBytes uint32) []byte {
	blockAlign := channels * ((bitsPerSample + 7) / 8)
	riff := min(uint64(dataBytes)+36, math.MaxUint32)
	h := make([]byte, 0, wavHeaderSize)
	h = append(h, "RIFF"...)
	h = binary.LittleEndian.AppendUint32(h, uint32(riff))
	h = append(h, "WAVE"...)
	h = append(h, "fmt "...)
	h = binary.LittleEndian.AppendUint32(h, 16)
	h = binary.LittleEndian.AppendUint16(h, 1) // PCM
	h = binary.LittleEndian.AppendUint16(h, uint16(channels))
	h = binary.LittleEndian.AppendUint32(h, uint32(sampleRate))
	h = binary.LittleEndian.AppendUint32(h, uint32(sampleRate*blockAlign))
	h = binary.LittleEndian.AppendUint16(h, uint16(blockAlign))
	h = binary.LittleEndian.AppendUint16(h, uint16(bitsPerSample))
	h = append(h, "data"...)
	h = binary.LittleEndian.AppendUint32(h, dataBytes)
	return h
}

func wavSamples(t Track) (sr int, n int64) {
	sr = synthSampleRate(t.SampleRate)
	return sr, synthSampleAt(t.Duration, sr)
}

// WAVSize is the exact byte length of the 16-bit mono PCM WAV file for t (44-byte header + data).
func WAVSize(t Track) int64 {
	_, n := wavSamples(t)
	return wavHeaderSize + 2*n
}

// NewWAVReader returns the 16-bit mono PCM WAV file of t as an
// io.ReadSeeker for net/http.ServeContent. Samples are synthesised for the
// region read, so memory stays bounded whatever the duration, and reading
// after a Seek gives the bytes of a read from the start. Not safe for
// concurrent use.
func NewWAVReader(t Track) io.ReadSeeker {
	sr, n := wavSamples(t)
	return newSynthReader(WAVHeader(sr, 1, 16, uint32(2*n)), newMixer(t, sr, n))
}
