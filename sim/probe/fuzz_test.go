package probe

import (
	"bytes"
	"errors"
	"testing"
)

// probeTestFuzzSeeds are the valid builder outputs plus a few broken ones.
// Seeds are cut to 8 KiB (most stay valid: WAV and CBR MP3 then take their
// size from the file) because the fuzzer handles large inputs slowly.
func probeTestFuzzSeeds() [][]byte {
	var seeds [][]byte
	for _, tc := range probeTestValidCases() {
		seeds = append(seeds, tc.data[:min(len(tc.data), 8<<10)])
	}
	// Headers with stream facts (codec, size, frame rate, sample rate).
	for _, tc := range probeTestStreamCases() {
		seeds = append(seeds, tc.data[:min(len(tc.data), 8<<10)])
	}
	return append(seeds,
		nil,
		[]byte("RIFF\xff\xff\xff\xffWAVEdata\xff\xff\xff\xff"),
		[]byte("\x00\x00\x00\x00ftyp"),
		[]byte("\x00\x00\x00\x01mdat\xff\xff\xff\xff\xff\xff\xff\xff"),
		[]byte{0x1A, 0x45, 0xDF, 0xA3, 0x80, 0x18, 0x53, 0x80, 0x67, 0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF},
		[]byte("ID3\x04\x00\x10\x7f\x7f\x7f\x7f"),
		[]byte("fLaC\x00\x00\x00\x22"),
	)
}

func FuzzProbe(f *testing.F) {
	for _, s := range probeTestFuzzSeeds() {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, data []byte, sizeKnown bool) {
		size := int64(len(data))
		if !sizeKnown {
			size = -1
		}
		r := &probeTestCountingReader{r: bytes.NewReader(data)}
		info, err := Probe(r, size)
		if err != nil {
			if info.Duration != 0 {
				t.Fatalf("error %v with duration %v", err, info.Duration)
			}
			if !errors.Is(err, ErrUnknownFormat) && !errors.Is(err, ErrNoDuration) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			if errors.Is(err, ErrUnknownFormat) && info.Format != "" {
				t.Fatalf("ErrUnknownFormat with format %q", info.Format)
			}
		} else {
			if info.Duration <= 0 {
				t.Fatalf("no error but duration %v", info.Duration)
			}
			if info.Format == "" {
				t.Fatal("no error but no format")
			}
		}
		if n := r.calls.Load(); n > probeMaxReads {
			t.Fatalf("%d ReadAt calls", n)
		}
		// The format DetectFormat reports is the one Probe starts from.
		if det := DetectFormat(data[:min(len(data), probeHeadLen)]); det == "" && err == nil {
			t.Fatalf("Probe succeeded (%v) on bytes DetectFormat rejects", info)
		}
	})
}

func FuzzDetectFormat(f *testing.F) {
	for _, s := range probeTestFuzzSeeds() {
		f.Add(s[:min(len(s), probeHeadLen)])
	}
	known := map[string]bool{"": true, FormatWAV: true, FormatMP4: true, FormatMKV: true, FormatMP3: true, FormatFLAC: true}
	f.Fuzz(func(t *testing.T, head []byte) {
		got := DetectFormat(head)
		if !known[got] {
			t.Fatalf("DetectFormat returned %q", got)
		}
		// More bytes never un-recognise a format found on a prefix.
		if got != "" && DetectFormat(append(bytes.Clone(head), 0, 0, 0, 0)) != got {
			t.Fatalf("appending bytes changed the format from %q", got)
		}
	})
}
