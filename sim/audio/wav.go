package audio

import (
	"encoding/binary"
	"io"
	"math"
)

// wavHeaderSize is the size of a canonical RIFF/WAVE PCM header.
const wavHeaderSize = 44

// WAVHeader returns the canonical 44-byte RIFF/WAVE header of a PCM file
// (format 1, a 16-byte fmt chunk, then the data chunk header) whose data
// chunk holds dataBytes bytes. The RIFF size saturates at 2^32-1 when
// dataBytes exceeds 2^32-1-36.
func WAVHeader(sampleRate, channels, bitsPerSample int, dataBytes uint32) []byte {
	blockAlign := channels * ((bitsPerSample + 7) / 8)
	riff := uint64(dataBytes) + 36
	if riff > math.MaxUint32 {
		riff = math.MaxUint32
	}
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

// wavSamples returns the effective sample rate and sample count of t.
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
// io.ReadSeeker, suitable for net/http.ServeContent. Nothing is materialised:
// samples are synthesised on demand for the region being read, in blocks of
// 8192 samples, so memory stays bounded (a few tens of KB plus the voice
// wavetables) whatever the duration, and reading after any Seek gives the
// same bytes as reading from the start. The reader is not safe for
// concurrent use; create one per request.
func NewWAVReader(t Track) io.ReadSeeker {
	sr, n := wavSamples(t)
	return newSynthReader(WAVHeader(sr, 1, 16, uint32(2*n)), newMixer(t, sr, n))
}
