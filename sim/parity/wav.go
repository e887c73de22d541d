package parity

import (
	"encoding/binary"
	"math"
)

// ToneWAV is the file of the presigned upload: one second of a 440 Hz tone
// with soft edges, 16-bit PCM mono at 16 kHz (32,044 bytes), a canonical
// RIFF/WAVE file any media probe reads.
func ToneWAV() []byte {
	const rate, seconds, hz = 16000, 1, 440.0
	n := rate * seconds
	b := make([]byte, 44+2*n)
	copy(b[0:], "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+2*n))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16) // fmt chunk size
	binary.LittleEndian.PutUint16(b[20:], 1)  // PCM
	binary.LittleEndian.PutUint16(b[22:], 1)  // mono
	binary.LittleEndian.PutUint32(b[24:], rate)
	binary.LittleEndian.PutUint32(b[28:], rate*2) // byte rate
	binary.LittleEndian.PutUint16(b[32:], 2)      // block align
	binary.LittleEndian.PutUint16(b[34:], 16)     // bits per sample
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(2*n))
	fade := rate / 20 // 50 ms
	for i := 0; i < n; i++ {
		amp := 0.3
		if i < fade {
			amp *= float64(i) / float64(fade)
		} else if n-i < fade {
			amp *= float64(n-i) / float64(fade)
		}
		v := int16(amp * math.MaxInt16 * math.Sin(2*math.Pi*hz*float64(i)/rate))
		binary.LittleEndian.PutUint16(b[44+2*i:], uint16(v))
	}
	return b
}
