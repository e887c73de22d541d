package probe

import (
	"bytes"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// probeTestSeconds converts fractional seconds to a Duration.
func probeTestSeconds(s float64) time.Duration {
	return time.Duration(math.Round(s * float64(time.Second)))
}

// probeTestValidCase is a well-formed input and what Probe must find.
type probeTestValidCase struct {
	name   string
	data   []byte
	size   int64 // 0: len(data)
	format string
	want   time.Duration
}

// probeTestValidCases is shared by the table test and the fuzz seeds.
func probeTestValidCases() []probeTestValidCase {
	u32 := func(v uint32) *uint32 { return &v }

	// WAV
	wav3s := probeTestWAV(probeTestWAVOpts{rate: 8000, channels: 1, bits: 16, frames: 3 * 8000})
	wavStreaming := probeTestWAV(probeTestWAVOpts{rate: 8000, channels: 2, bits: 16, frames: 2000, dataSize: u32(0xFFFFFFFF)})
	wavTooLong := probeTestWAV(probeTestWAVOpts{rate: 8000, channels: 1, bits: 8, frames: 4000, dataSize: u32(1 << 30)})

	// MP4
	moov := func(children ...[]byte) []byte { return probeTestBox("moov", children...) }
	trak := probeTestTrak(probeTestMdhd(0, 44100, 44100*3))
	mdat := probeTestBox("mdat", make([]byte, 3000))
	moovSize0 := moov(probeTestMvhd(0, 600, 600*5), trak)
	binary0 := func(b []byte) []byte { copy(b[0:4], []byte{0, 0, 0, 0}); return b }

	// Matroska
	tracks := probeTestTracks()
	void := probeTestEl(0xEC, make([]byte, 40))
	seekHead := probeTestSeekHead(0) // same length whatever the position
	infoPos := uint64(len(seekHead) + len(void) + len(tracks))
	cluster := probeTestEl(mkvIDCluster, probeTestEBMLUint(0xE7, 0), probeTestEl(0xA3, make([]byte, 500)))

	// MP3
	mpeg2Mono64 := []byte{0xFF, 0xF3, 0x80, 0xC0}  // MPEG-2 layer III, 64 kbit/s, 22.05 kHz, mono
	mpeg25Mono32 := []byte{0xFF, 0xE3, 0x40, 0xC0} // MPEG-2.5 layer III, 32 kbit/s, 11.025 kHz, mono
	layer2 := []byte{0xFF, 0xFD, 0xA0, 0x00}       // MPEG-1 layer II, 192 kbit/s, 44.1 kHz
	cbr := probeTestMP3Frames(probeTestMP3Header128, 100)
	cbrSecs := func(bytes int, kbps int) time.Duration {
		return time.Duration(int64(bytes) * 8 * int64(time.Second) / int64(kbps*1000))
	}

	return []probeTestValidCase{
		{name: "wav pcm 3s", data: wav3s, format: FormatWAV, want: 3 * time.Second},
		{name: "wav pcm size unknown", data: wav3s, size: -1, format: FormatWAV, want: 3 * time.Second},
		{name: "wav LIST before data", data: probeTestWAV(probeTestWAVOpts{rate: 16000, channels: 1, bits: 16, frames: 16000 * 3 / 2, list: true}), format: FormatWAV, want: 1500 * time.Millisecond},
		{name: "wav extensible stereo", data: probeTestWAV(probeTestWAVOpts{rate: 48000, channels: 2, bits: 24, frames: 48000 / 4, extensible: true}), format: FormatWAV, want: 250 * time.Millisecond},
		{name: "wav streaming data size", data: wavStreaming, format: FormatWAV, want: 250 * time.Millisecond},
		{name: "wav data size past end", data: wavTooLong, format: FormatWAV, want: 500 * time.Millisecond},
		{name: "wav data size past end size unknown", data: wavTooLong, size: -1, format: FormatWAV, want: probeTestSeconds(float64(1<<30) / 8000)},

		{name: "mp4 mvhd v0", data: probeTestCat(probeTestFtyp("isom"), moov(probeTestMvhd(0, 1000, 3500), trak), mdat), format: FormatMP4, want: 3500 * time.Millisecond},
		{name: "mp4 mvhd v1 64-bit duration", data: probeTestCat(probeTestFtyp("isom"), moov(probeTestMvhd(1, 90000, 90000*3*3600), trak), mdat), format: FormatMP4, want: 3 * time.Hour},
		{name: "mp4 moov after mdat", data: probeTestCat(probeTestFtyp("mp42"), probeTestBox("free"), mdat, moov(probeTestMvhd(0, 1000, 1234), trak)), format: FormatMP4, want: 1234 * time.Millisecond},
		{name: "mp4 moov after mdat size unknown", data: probeTestCat(probeTestFtyp("mp42"), mdat, moov(probeTestMvhd(0, 1000, 1234), trak)), size: -1, format: FormatMP4, want: 1234 * time.Millisecond},
		{name: "mp4 mvhd after trak", data: probeTestCat(probeTestFtyp("isom"), moov(trak, probeTestMvhd(0, 1000, 2000))), format: FormatMP4, want: 2 * time.Second},
		{name: "mp4 mvhd zero uses longest mdhd", data: probeTestCat(probeTestFtyp("isom"), moov(probeTestMvhd(0, 1000, 0), trak, probeTestTrak(probeTestMdhd(1, 25, 100)), probeTestTrak(probeTestMdhd(0, 48000, 48000)))), format: FormatMP4, want: 4 * time.Second},
		{name: "mp4 mvhd all-ones uses mdhd", data: probeTestCat(probeTestFtyp("isom"), moov(probeTestMvhd(0, 1000, 0xFFFFFFFF), trak)), format: FormatMP4, want: 3 * time.Second},
		{name: "m4a fragmented mehd v1", data: probeTestCat(probeTestFtyp("M4A "), moov(probeTestMvhd(0, 1000, 0), probeTestBox("mvex", probeTestMehd(1, 7250), probeTestBox("trex", make([]byte, 24))), probeTestTrak(probeTestMdhd(0, 44100, 0))), probeTestBox("moof", make([]byte, 16)), mdat), format: FormatMP4, want: 7250 * time.Millisecond},
		{name: "mp4 fragmented mehd v0", data: probeTestCat(probeTestFtyp("iso6"), moov(probeTestMvhd(0, 90000, 0), probeTestTrak(probeTestMdhd(0, 90000, 0)), probeTestBox("mvex", probeTestMehd(0, 90000*2)))), format: FormatMP4, want: 2 * time.Second},
		{name: "fmp4 empty moov trex defaults", data: probeTestCat(probeTestFtyp("iso5"),
			moov(probeTestMvhd(0, 1000, 0), probeTestTrakID(1, probeTestMdhd(0, 44100, 0)), probeTestBox("mvex", probeTestTrex(1, 1024))),
			probeTestMoof(1, probeTestTraf(1, 0, -1, nil, 43)), probeTestMoof(2, probeTestTraf(1, 0, -1, nil, 43)), probeTestMoof(3, probeTestTraf(1, 0, -1, nil, 43)),
			probeTestBox("mfra", make([]byte, 30))), format: FormatMP4, want: probeTestSeconds(129 * 1024 / 44100.0)},
		{name: "fmp4 tfdt and sample durations two tracks", data: probeTestCat(probeTestFtyp("iso6"),
			moov(probeTestMvhd(0, 1000, 0), probeTestTrakID(1, probeTestMdhd(0, 90000, 0)), probeTestTrakID(2, probeTestMdhd(1, 48000, 0)),
				probeTestBox("mvex", probeTestTrex(1, 0), probeTestTrex(2, 1024))),
			probeTestMoof(1, probeTestTraf(1, 0, 0, probeTestRepeat(3600, 25), 0), probeTestTraf(2, 0, 0, nil, 47)),
			probeTestMoof(2, probeTestTraf(1, 0, 90000, probeTestRepeat(3600, 25), 0), probeTestTraf(2, 0, 48128, nil, 46)),
			probeTestMoof(3, probeTestTraf(9, 0, 0, probeTestRepeat(90000, 100), 0))), // unknown track: ignored
			size: -1, format: FormatMP4, want: 2 * time.Second},
		{name: "fmp4 tfhd default duration and 64-bit tfdt", data: probeTestCat(probeTestFtyp("iso6"),
			moov(probeTestMvhd(0, 1000, 0), probeTestTrakID(7, probeTestMdhd(0, 1000, 0)), probeTestBox("mvex")),
			probeTestMoof(1, probeTestTraf(7, 40, 1<<32, nil, 25))), format: FormatMP4, want: probeTestSeconds((1<<32 + 1000) / 1000.0)},
		{name: "fmp4 non-empty moov then fragments", data: probeTestCat(probeTestFtyp("iso6"),
			moov(probeTestMvhd(0, 1000, 500), probeTestTrakID(1, probeTestMdhd(0, 1000, 500)), probeTestBox("mvex", probeTestTrex(1, 100))),
			mdat, probeTestMoof(1, probeTestTraf(1, 0, -1, nil, 10)), probeTestMoof(2, probeTestTraf(1, 0, -1, nil, 10))), format: FormatMP4, want: 2500 * time.Millisecond},
		{name: "mov quicktime without ftyp", data: probeTestCat(probeTestBox("wide"), mdat, moov(probeTestMvhd(0, 600, 600*10), trak)), format: FormatMP4, want: 10 * time.Second},
		{name: "mov starting with moov", data: probeTestCat(moov(probeTestMvhd(0, 600, 300), trak), mdat), format: FormatMP4, want: 500 * time.Millisecond},
		{name: "mp4 moov size 0 to end of file", data: probeTestCat(probeTestFtyp("isom"), mdat, binary0(moovSize0)), format: FormatMP4, want: 5 * time.Second},
		{name: "mp4 moov size 0 size unknown", data: probeTestCat(probeTestFtyp("isom"), mdat, binary0(moovSize0)), size: -1, format: FormatMP4, want: 5 * time.Second},
		{name: "mp4 largesize mdat", data: probeTestCat(probeTestFtyp("isom"), probeTestBoxHeader64("mdat", 16+100), make([]byte, 100), moov(probeTestMvhd(0, 1000, 999), trak)), format: FormatMP4, want: 999 * time.Millisecond},
		{name: "mp4 moov size past end of file", data: probeTestCat(probeTestFtyp("isom"), probeTestBE32(1<<20), []byte("moov"), probeTestMvhd(0, 1000, 3000)), format: FormatMP4, want: 3 * time.Second},

		{name: "matroska float8 default scale", data: probeTestMKV("matroska", probeTestInfo(0, 3500, 8), tracks, cluster), format: FormatMKV, want: 3500 * time.Millisecond},
		{name: "webm float4", data: probeTestMKV("webm", probeTestInfo(1_000_000, 2500, 4), tracks, cluster), format: FormatMKV, want: 2500 * time.Millisecond},
		{name: "matroska custom TimecodeScale", data: probeTestMKV("matroska", probeTestInfo(1000, 1234567, 8), tracks), format: FormatMKV, want: 1234567 * time.Microsecond},
		{name: "matroska SeekHead before Info", data: probeTestMKV("matroska", probeTestSeekHead(infoPos), void, tracks, probeTestInfo(0, 4000, 8), cluster), format: FormatMKV, want: 4 * time.Second},
		{name: "matroska stale SeekHead", data: probeTestMKV("matroska", probeTestSeekHead(3), void, tracks, probeTestInfo(0, 4000, 8), cluster), format: FormatMKV, want: 4 * time.Second},
		{name: "matroska Info after clusters", data: probeTestMKV("matroska", tracks, cluster, cluster, probeTestInfo(0, 750, 4)), format: FormatMKV, want: 750 * time.Millisecond},
		{name: "matroska unknown-size Segment", data: probeTestCat(probeTestEBMLHeader("matroska"), probeTestElUnknown(mkvIDSegment, 8, probeTestSeekHead(infoPos), void, tracks, probeTestInfo(0, 6000, 8), cluster)), format: FormatMKV, want: 6 * time.Second},
		{name: "webm unknown-size Segment 1-byte size", data: probeTestCat(probeTestEBMLHeader("webm"), probeTestElUnknown(mkvIDSegment, 1, probeTestInfo(0, 6000, 4), probeTestElUnknown(mkvIDCluster, 8, make([]byte, 100)))), size: -1, format: FormatMKV, want: 6 * time.Second},
		{name: "matroska 8-byte sizes and Void before Segment", data: probeTestCat(probeTestEBMLHeader("matroska"), probeTestEl(0xEC, make([]byte, 3)), probeTestElSized(mkvIDSegment, 8, probeTestElSized(mkvIDInfo, 8, probeTestEBMLFloat(mkvIDDuration, 100, 8)))), format: FormatMKV, want: 100 * time.Millisecond},

		{name: "mp3 cbr 128k", data: cbr, format: FormatMP3, want: cbrSecs(len(cbr), 128)},
		{name: "mp3 id3v2 cbr", data: probeTestCat(probeTestID3(1000, false), cbr), format: FormatMP3, want: cbrSecs(len(cbr), 128)},
		{name: "mp3 id3v2 footer and padding", data: probeTestCat(probeTestID3(300, true), make([]byte, 700), cbr), format: FormatMP3, want: cbrSecs(len(cbr), 128)},
		{name: "mp3 two id3v2 tags", data: probeTestCat(probeTestID3(10, false), probeTestID3(20, false), cbr), format: FormatMP3, want: cbrSecs(len(cbr), 128)},
		{name: "mp3 xing", data: probeTestMP3Xing(probeTestMP3Header128, "Xing", 1000, 20), format: FormatMP3, want: probeTestSeconds(1000 * 1152 / 44100.0)},
		{name: "mp3 id3v2 info size unknown", data: probeTestCat(probeTestID3(4000, false), probeTestMP3Xing(probeTestMP3Header128, "Info", 500, 20)), size: -1, format: FormatMP3, want: probeTestSeconds(500 * 1152 / 44100.0)},
		{name: "mp3 mpeg2 mono xing", data: probeTestMP3Xing(mpeg2Mono64, "Xing", 2000, 10), format: FormatMP3, want: probeTestSeconds(2000 * 576 / 22050.0)},
		{name: "mp3 vbri", data: probeTestMP3VBRI(probeTestMP3Header128, 300, 10), format: FormatMP3, want: probeTestSeconds(300 * 1152 / 44100.0)},
		{name: "mp3 mpeg2.5 cbr", data: probeTestMP3Frames(mpeg25Mono32, 50), format: FormatMP3, want: cbrSecs(len(probeTestMP3Frames(mpeg25Mono32, 50)), 32)},
		{name: "mp2 layer II cbr", data: probeTestMP3Frames(layer2, 40), format: FormatMP3, want: cbrSecs(len(probeTestMP3Frames(layer2, 40)), 192)},

		{name: "flac streaminfo", data: probeTestFLAC(44100, 44100*5), format: FormatFLAC, want: 5 * time.Second},
		{name: "flac 36-bit sample count", data: probeTestFLAC(96000, 1<<35), size: -1, format: FormatFLAC, want: probeTestSeconds(float64(int64(1)<<35) / 96000)},
		{name: "flac behind id3v2", data: probeTestCat(probeTestID3(100, false), probeTestFLAC(48000, 48000*2)), format: FormatFLAC, want: 2 * time.Second},
	}
}

func TestProbeValid(t *testing.T) {
	t.Parallel()
	for _, tc := range probeTestValidCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			size := tc.size
			if size == 0 {
				size = int64(len(tc.data))
			}
			info, err := Probe(bytes.NewReader(tc.data), size)
			require.NoError(t, err)
			assert.Equal(t, tc.format, info.Format)
			assert.InDelta(t, float64(tc.want), float64(info.Duration), float64(time.Microsecond), "got %v want %v", info.Duration, tc.want)
			wantDetect := tc.format
			if bytes.HasPrefix(tc.data, []byte("ID3")) {
				wantDetect = FormatMP3 // DetectFormat only sees the tag
			}
			assert.Equal(t, wantDetect, DetectFormat(tc.data[:min(len(tc.data), probeHeadLen)]))
		})
	}
}

func TestProbeDetectFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		head []byte
		want string
	}{
		{"empty", nil, ""},
		{"wav", []byte("RIFF\x24\x00\x00\x00WAVEfmt "), FormatWAV},
		{"riff avi", []byte("RIFF\x24\x00\x00\x00AVI LIST"), ""},
		{"riff short", []byte("RIFF\x24\x00\x00\x00WAV"), ""},
		{"ftyp", []byte("\x00\x00\x00\x18ftypisom"), FormatMP4},
		{"quicktime moov", []byte("\x00\x00\x10\x00moov"), FormatMP4},
		{"quicktime mdat", []byte("\x00\x00\x00\x01mdat"), FormatMP4},
		{"quicktime wide", []byte("\x00\x00\x00\x08wide"), FormatMP4},
		{"quicktime free", []byte("\x00\x00\x00\x08free"), FormatMP4},
		{"free with bad size", []byte("\x00\x00\x00\x05free"), ""},
		{"ebml", []byte{0x1A, 0x45, 0xDF, 0xA3, 0x9F}, FormatMKV},
		{"flac", []byte("fLaC\x00\x00\x00\x22"), FormatFLAC},
		{"id3", []byte("ID3\x04\x00"), FormatMP3},
		{"mpeg1 layer III", probeTestMP3Header128, FormatMP3},
		{"mpeg2 layer III", []byte{0xFF, 0xF3, 0x80, 0xC0}, FormatMP3},
		{"mpeg2.5 layer III", []byte{0xFF, 0xE3, 0x40, 0xC0}, FormatMP3},
		{"mpeg1 layer I", []byte{0xFF, 0xFF, 0x10, 0x00}, FormatMP3},
		{"mpeg reserved version", []byte{0xFF, 0xEB, 0x90, 0x00}, ""},
		{"mpeg reserved layer", []byte{0xFF, 0xF9, 0x90, 0x00}, ""},
		{"mpeg bad bitrate", []byte{0xFF, 0xFB, 0xF0, 0x00}, ""},
		{"mpeg free bitrate", []byte{0xFF, 0xFB, 0x00, 0x00}, ""},
		{"mpeg bad sample rate", []byte{0xFF, 0xFB, 0x9C, 0x00}, ""},
		{"adts aac", []byte{0xFF, 0xF1, 0x50, 0x80}, ""},
		{"three bytes of sync", []byte{0xFF, 0xFB, 0x90}, ""},
		{"text", []byte("hello, world"), ""},
		{"zeros", make([]byte, 64), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, DetectFormat(tc.head))
		})
	}
}

func TestProbeErrors(t *testing.T) {
	t.Parallel()
	u32 := func(v uint32) *uint32 { return &v }
	wav := probeTestWAV(probeTestWAVOpts{rate: 8000, channels: 1, bits: 16, frames: 800})
	mp4 := probeTestCat(probeTestFtyp("isom"), probeTestBox("moov", probeTestMvhd(0, 1000, 3500)))
	mkv := probeTestMKV("webm", probeTestInfo(0, 3500, 8))
	flac := probeTestFLAC(44100, 44100)
	random := make([]byte, 4096)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(rng.UintN(256))
	}
	random[0] = 0 // not a sync byte

	const depth = 20000
	nestedMoov := make([]byte, 0, 8*depth) // moov in moov in moov … (depth bomb)
	for i := range depth {
		nestedMoov = append(nestedMoov, probeTestCat(probeTestBE32(uint32(8*(depth-i))), []byte("moov"))...)
	}
	var nestedTrak []byte // trak/mdia/trak/mdia … without mdhd
	for i := range 5000 {
		typ := "trak"
		if i%2 == 1 {
			typ = "mdia"
		}
		nestedTrak = probeTestBox(typ, nestedTrak)
	}
	var nestedEBML []byte // SeekHead in SeekHead in … / Info in Info
	for range 5000 {
		nestedEBML = probeTestEl(mkvIDInfo, probeTestEl(mkvIDSeekHead, nestedEBML))
	}

	// Many tiny boxes: the walk stops at its entry cap, not at the end.
	manyFree := bytes.Repeat(probeTestBox("free"), probeMaxEntries+10)

	tests := []struct {
		name string
		data []byte
		size int64 // 0: len(data)
		want error
	}{
		{"empty", nil, 0, ErrUnknownFormat},
		{"one byte", []byte{0xFF}, 0, ErrUnknownFormat},
		{"random bytes", random, 0, ErrUnknownFormat},
		{"text", []byte("<html><body>not media</body></html>"), 0, ErrUnknownFormat},

		{"wav header only", wav[:12], 0, ErrNoDuration},
		{"wav truncated fmt", wav[:30], 0, ErrNoDuration},
		{"wav no data chunk", wav[:36], 0, ErrNoDuration},
		{"wav zero byte rate", probeTestCat(wav[:28], []byte{0, 0, 0, 0, 0, 0}, wav[34:]), 0, ErrNoDuration},
		{"wav fmt too short", probeTestCat([]byte("RIFF\x00\x00\x00\x00WAVEfmt \x04\x00\x00\x00\x01\x00\x01\x00"), wav[36:]), 0, ErrNoDuration},
		{"wav empty data", probeTestWAV(probeTestWAVOpts{rate: 8000, channels: 1, bits: 16, frames: 0}), 0, ErrNoDuration},
		{"wav streaming size unknown", probeTestWAV(probeTestWAVOpts{rate: 8000, channels: 1, bits: 16, frames: 80, dataSize: u32(0xFFFFFFFF)}), -1, ErrNoDuration},
		{"wav huge chunk before data", probeTestCat(wav[:36], []byte("junk\xF0\xFF\xFF\xFF"), wav[36:]), 0, ErrNoDuration},

		{"mp4 ftyp only", probeTestFtyp("isom"), 0, ErrNoDuration},
		{"mp4 truncated box header", mp4[:len(mp4)-100], 0, ErrNoDuration},
		{"mp4 truncated mvhd", mp4[:len(mp4)-90], 0, ErrNoDuration},
		{"mp4 mdat past end", probeTestCat(probeTestFtyp("isom"), probeTestBE32(1<<30), []byte("mdat"), make([]byte, 100)), 0, ErrNoDuration},
		{"mp4 mdat past end size unknown", probeTestCat(probeTestFtyp("isom"), probeTestBE32(1<<30), []byte("mdat"), make([]byte, 100)), -1, ErrNoDuration},
		{"mp4 free size 0 to end", probeTestCat(probeTestFtyp("isom"), probeTestBE32(0), []byte("free"), mp4), 0, ErrNoDuration},
		{"mp4 box size 4", probeTestCat(probeTestFtyp("isom"), probeTestBE32(4), []byte("free"), mp4), 0, ErrNoDuration},
		{"mp4 largesize 8", probeTestCat(probeTestFtyp("isom"), probeTestBoxHeader64("free", 8), mp4), 0, ErrNoDuration},
		{"mp4 largesize huge", probeTestCat(probeTestFtyp("isom"), probeTestBoxHeader64("mdat", math.MaxUint64), mp4), 0, ErrNoDuration},
		{"mp4 largesize max int64", probeTestCat(probeTestFtyp("isom"), probeTestBoxHeader64("mdat", math.MaxInt64), mp4), -1, ErrNoDuration},
		{"mp4 mvhd zero timescale", probeTestCat(probeTestFtyp("isom"), probeTestBox("moov", probeTestMvhd(0, 0, 3500))), 0, ErrNoDuration},
		{"mp4 mvhd bad version", probeTestCat(probeTestFtyp("isom"), probeTestBox("moov", probeTestBox("mvhd", []byte{7, 0, 0, 0}, make([]byte, 96)))), 0, ErrNoDuration},
		{"mp4 mvhd zero no tracks", probeTestCat(probeTestFtyp("isom"), probeTestBox("moov", probeTestMvhd(1, 1000, 0))), 0, ErrNoDuration},
		{"mp4 nested moov bomb", probeTestCat(probeTestFtyp("isom"), nestedMoov), 0, ErrNoDuration},
		{"mp4 nested trak bomb", probeTestCat(probeTestFtyp("isom"), probeTestBox("moov", probeTestMvhd(0, 1000, 0), nestedTrak)), 0, ErrNoDuration},
		{"mp4 many boxes", probeTestCat(probeTestFtyp("isom"), manyFree, mp4), 0, ErrNoDuration},

		{"fmp4 no fragments", probeTestCat(probeTestFtyp("iso6"), probeTestBox("moov", probeTestMvhd(0, 1000, 0), probeTestTrakID(1, probeTestMdhd(0, 1000, 0)), probeTestBox("mvex", probeTestTrex(1, 100)))), 0, ErrNoDuration},
		{"fmp4 trun count exceeds box", probeTestCat(probeTestFtyp("iso6"), probeTestBox("moov", probeTestMvhd(0, 1000, 0), probeTestTrakID(1, probeTestMdhd(0, 1000, 0)), probeTestBox("mvex")),
			probeTestBox("moof", probeTestBox("traf", probeTestBox("tfhd", []byte{0, 0, 0, 0}, probeTestBE32(1)), probeTestBox("trun", []byte{0, 0, 1, 0}, probeTestBE32(0xFFFFFFFF), make([]byte, 40))))), 0, ErrNoDuration},
		{"fmp4 trun before tfhd", probeTestCat(probeTestFtyp("iso6"), probeTestBox("moov", probeTestMvhd(0, 1000, 0), probeTestTrakID(1, probeTestMdhd(0, 1000, 0)), probeTestBox("mvex")),
			probeTestBox("moof", probeTestBox("traf", probeTestBox("trun", []byte{0, 0, 0, 0}, probeTestBE32(10))))), 0, ErrNoDuration},
		{"fmp4 truncated moof", probeTestCat(probeTestFtyp("iso6"), probeTestBox("moov", probeTestMvhd(0, 1000, 0), probeTestTrakID(1, probeTestMdhd(0, 1000, 0)), probeTestBox("mvex", probeTestTrex(1, 100))),
			probeTestMoof(1, probeTestTraf(1, 0, -1, nil, 10))[:60]), 0, ErrNoDuration},

		{"ebml magic only", []byte{0x1A, 0x45, 0xDF, 0xA3}, 0, ErrNoDuration},
		{"ebml truncated header", mkv[:20], 0, ErrNoDuration},
		{"ebml unknown doctype", probeTestCat(probeTestEBMLHeader("foo"), probeTestEl(mkvIDSegment, probeTestInfo(0, 1000, 8))), 0, ErrUnknownFormat},
		{"ebml unknown-size header", probeTestCat([]byte{0x1A, 0x45, 0xDF, 0xA3, 0xFF}, mkv[5:]), 0, ErrNoDuration},
		{"matroska no segment", probeTestEBMLHeader("matroska"), 0, ErrNoDuration},
		{"matroska truncated duration", mkv[:len(mkv)-12], 0, ErrNoDuration},
		{"matroska info without duration", probeTestMKV("matroska", probeTestEl(mkvIDInfo, probeTestEBMLUint(mkvIDTimecodeScale, 1000000))), 0, ErrNoDuration},
		{"matroska zero duration", probeTestMKV("matroska", probeTestInfo(0, 0, 8)), 0, ErrNoDuration},
		{"matroska negative duration", probeTestMKV("matroska", probeTestInfo(0, -5, 8)), 0, ErrNoDuration},
		{"matroska NaN duration", probeTestMKV("matroska", probeTestInfo(0, math.NaN(), 8)), 0, ErrNoDuration},
		{"matroska overflowing duration", probeTestMKV("matroska", probeTestInfo(1e9, 1e300, 8)), 0, ErrNoDuration},
		{"matroska bad duration size", probeTestMKV("matroska", probeTestEl(mkvIDInfo, probeTestEl(mkvIDDuration, []byte{1, 2, 3}))), 0, ErrNoDuration},
		{"matroska unknown-size cluster before info", probeTestCat(probeTestEBMLHeader("matroska"), probeTestElUnknown(mkvIDSegment, 8, probeTestElUnknown(mkvIDCluster, 8, make([]byte, 50)), probeTestInfo(0, 1000, 8))), 0, ErrNoDuration},
		{"matroska huge element before info", probeTestCat(probeTestEBMLHeader("matroska"), probeTestElUnknown(mkvIDSegment, 8, probeTestCat([]byte{0xEC}, probeTestVint(1<<56-2, 8)), probeTestInfo(0, 1000, 8))), 0, ErrNoDuration},
		{"matroska invalid element id", probeTestCat(probeTestEBMLHeader("matroska"), []byte{0x18, 0x53, 0x80, 0x67, 0x85, 0x00, 0x81, 0x00, 0x00, 0x00}), 0, ErrNoDuration},
		{"matroska nested bomb", probeTestCat(probeTestEBMLHeader("matroska"), probeTestElUnknown(mkvIDSegment, 8, probeTestEl(mkvIDSeekHead, nestedEBML))), 0, ErrNoDuration},
		{"matroska nested info bomb", probeTestCat(probeTestEBMLHeader("matroska"), probeTestElUnknown(mkvIDSegment, 8, nestedEBML)), 0, ErrNoDuration},

		{"id3 only", probeTestID3(100, false), 0, ErrNoDuration},
		{"id3 huge size", probeTestCat([]byte("ID3\x04\x00\x00\x7F\x7F\x7F\x7F"), probeTestMP3Frames(probeTestMP3Header128, 3)), 0, ErrNoDuration},
		{"mp3 cbr size unknown", probeTestMP3Frames(probeTestMP3Header128, 10), -1, ErrNoDuration},
		{"mp3 header only", probeTestMP3Header128, -1, ErrNoDuration},
		{"mp3 xing zero frames size unknown", probeTestMP3Xing(probeTestMP3Header128, "Xing", 0, 3), -1, ErrNoDuration},
		{"id3 then garbage", probeTestCat(probeTestID3(10, false), bytes.Repeat([]byte{0xFF}, 5000)), 0, ErrNoDuration},
		{"id3 then unconfirmed frames", probeTestCat(probeTestID3(10, false), []byte{0}, bytes.Repeat([]byte{0xFF, 0xFB, 0x90, 0x40, 0x12}, 5000)), 0, ErrNoDuration},

		{"flac magic only", []byte("fLaC"), 0, ErrNoDuration},
		{"flac truncated streaminfo", flac[:20], 0, ErrNoDuration},
		{"flac zero samples", probeTestFLAC(44100, 0), 0, ErrNoDuration},
		{"flac zero rate", probeTestFLAC(0, 1000), 0, ErrNoDuration},
		{"flac first block not streaminfo", probeTestCat([]byte("fLaC\x84\x00\x00\x22"), flac[8:]), 0, ErrNoDuration},
		{"flac short streaminfo", probeTestCat([]byte("fLaC\x80\x00\x00\x10"), flac[8:]), 0, ErrNoDuration},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			size := tc.size
			if size == 0 {
				size = int64(len(tc.data))
			}
			info, err := Probe(bytes.NewReader(tc.data), size)
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.want)
			assert.Zero(t, info.Duration)
		})
	}
}

func TestProbeNilReader(t *testing.T) {
	t.Parallel()
	_, err := Probe(nil, 100)
	require.ErrorIs(t, err, ErrUnknownFormat)
}

func TestProbeIOError(t *testing.T) {
	t.Parallel()
	errBoom := errors.New("boom")
	data := probeTestCat(probeTestFtyp("isom"), probeTestBox("mdat", make([]byte, 200<<10)),
		probeTestBox("moov", probeTestMvhd(0, 1000, 1000)))

	// The first window works, the read of moov fails.
	_, err := Probe(probeTestErrReader{data: data, ok: 1, err: errBoom}, int64(len(data)))
	require.ErrorIs(t, err, errBoom)
	assert.NotErrorIs(t, err, ErrNoDuration)

	// The very first read fails.
	_, err = Probe(probeTestErrReader{data: data, ok: 0, err: errBoom}, int64(len(data)))
	require.ErrorIs(t, err, errBoom)
}

// TestProbeSparseReads checks that media payload is skipped, not read:
// huge files are probed with a couple of ReadAt calls.
func TestProbeSparseReads(t *testing.T) {
	t.Parallel()
	const gib = int64(1) << 30
	trak := probeTestTrak(probeTestMdhd(0, 48000, 48000*3600))
	moovTail := probeTestBox("moov", probeTestMvhd(1, 1000, 3600_000), trak, trak)
	infoTail := probeTestInfo(0, 3600_000, 8)
	seekHead := probeTestSeekHead(0)
	clusterHeader := probeTestCat(probeTestID(mkvIDCluster), probeTestVint(1<<56-1, 8))

	tests := []struct {
		name      string
		reader    *probeTestSparse
		unknown   bool // pass size -1
		format    string
		want      time.Duration
		maxCalls  int
		maxBytesK int64 // KiB
	}{
		{
			name: "mp4 moov after 5 GiB largesize mdat",
			reader: &probeTestSparse{
				head: probeTestCat(probeTestFtyp("isom"), probeTestBoxHeader64("mdat", uint64(16+5*gib))),
				gap:  5 * gib, tail: moovTail,
			},
			format: FormatMP4, want: time.Hour, maxCalls: 2, maxBytesK: 128,
		},
		{
			name: "mp4 no moov after 3.75 GiB mdat",
			reader: &probeTestSparse{
				head: probeTestCat(probeTestFtyp("isom"), probeTestBE32(0xF0000000), []byte("mdat")),
				gap:  0xF0000000 - 8, tail: probeTestBox("free", make([]byte, 100)),
			},
			format: FormatMP4, maxCalls: 2, maxBytesK: 128,
		},
		{
			name: "wav 2 GiB data",
			reader: &probeTestSparse{
				head: probeTestWAV(probeTestWAVOpts{rate: 48000, channels: 2, bits: 16, frames: 0, dataSize: func() *uint32 { v := uint32(2 * gib); return &v }()}),
				gap:  2 * gib,
			},
			format: FormatWAV, want: probeTestSeconds(float64(2*gib) / (48000 * 4)), maxCalls: 1, maxBytesK: 64,
		},
		{
			name: "matroska SeekHead jumps over unknown-size cluster",
			reader: &probeTestSparse{
				head: probeTestCat(probeTestEBMLHeader("matroska"), probeTestElUnknown(mkvIDSegment, 8),
					probeTestSeekHead(uint64(len(seekHead)+len(clusterHeader))+uint64(4*gib)), clusterHeader),
				gap: 4 * gib, tail: infoTail,
			},
			unknown: true, format: FormatMKV, want: time.Hour, maxCalls: 2, maxBytesK: 128,
		},
		{
			name: "matroska skips known-size cluster",
			reader: &probeTestSparse{
				head: probeTestCat(probeTestEBMLHeader("webm"), probeTestElUnknown(mkvIDSegment, 8),
					probeTestID(mkvIDCluster), probeTestVint(uint64(3*gib), 8)),
				gap: 3 * gib, tail: infoTail,
			},
			format: FormatMKV, want: time.Hour, maxCalls: 2, maxBytesK: 128,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			size := tc.reader.Size()
			if tc.unknown {
				size = -1
			}
			info, err := Probe(tc.reader, size)
			if tc.want == 0 {
				require.ErrorIs(t, err, ErrNoDuration)
			} else {
				require.NoError(t, err)
				assert.Equal(t, tc.format, info.Format)
				assert.InDelta(t, float64(tc.want), float64(info.Duration), float64(time.Microsecond))
			}
			calls, n := tc.reader.stats()
			assert.LessOrEqual(t, calls, tc.maxCalls, "ReadAt calls")
			assert.LessOrEqual(t, n, tc.maxBytesK<<10, "bytes read")
			assert.Less(t, n*1000, tc.reader.Size(), "read far less than the file")
		})
	}
}

// TestProbeReadBudget checks that small files cost one ReadAt and that
// pathological inputs are bounded by the read budget.
func TestProbeReadBudget(t *testing.T) {
	t.Parallel()
	for _, tc := range probeTestValidCases() {
		if len(tc.data) > probeWindow || tc.size < 0 {
			continue
		}
		r := &probeTestSparse{head: tc.data}
		_, err := Probe(r, r.Size())
		require.NoError(t, err, tc.name)
		calls, _ := r.stats()
		assert.Equal(t, 1, calls, tc.name)
	}

	// Chains of 1 MiB chunks/boxes/elements: every skip needs a fresh
	// window, so the read budget, not the entry cap, ends the walk.
	const period = 1 << 20
	chains := map[string]*probeTestPeriodic{
		"wav junk chunks": {prefix: []byte("RIFF\xFF\xFF\xFF\xFFWAVE"),
			unit: probeTestCat([]byte("junk"), probeTestLE32(period-8))},
		"mp4 free boxes": {prefix: probeTestFtyp("isom"),
			unit: probeTestCat(probeTestBE32(period), []byte("free"))},
		"matroska void elements": {prefix: probeTestCat(probeTestEBMLHeader("webm"), probeTestElUnknown(mkvIDSegment, 8)),
			unit: probeTestCat([]byte{0xEC}, probeTestVint(period-9, 8))},
	}
	for name, r := range chains {
		r.period = period
		for _, size := range []int64{-1, 1 << 40} {
			_, err := Probe(r, size)
			require.ErrorIs(t, err, ErrNoDuration, name)
		}
		assert.Equal(t, 2*probeMaxReads, int(r.calls.Load()), name)
	}
}

// TestProbeAllocations checks that declared sizes never drive allocation.
// Not parallel: it reads the global allocation counter.
func TestProbeAllocations(t *testing.T) {
	inputs := map[string]*probeTestSparse{
		"mp4 1 TiB mdat": {head: probeTestCat(probeTestFtyp("isom"), probeTestBoxHeader64("mdat", 1<<40)), gap: 1 << 40,
			tail: probeTestBox("moov", probeTestMvhd(0, 1000, 1000))},
		"mkv huge elements": {head: probeTestCat(probeTestEBMLHeader("matroska"), probeTestElUnknown(mkvIDSegment, 8),
			probeTestCat([]byte{0xEC}, probeTestVint(1<<50, 8))), gap: 1 << 50},
		"wav 4 GiB data": {head: probeTestWAV(probeTestWAVOpts{rate: 8000, channels: 1, bits: 8}), gap: 1 << 32},
	}
	for name, r := range inputs {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, _ = Probe(r, r.Size())
		runtime.ReadMemStats(&after)
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(2<<20), name)
	}
}

// TestProbeReaderContract exercises probeReader edge cases directly.
func TestProbeReaderContract(t *testing.T) {
	t.Parallel()
	data := []byte("0123456789")
	p := &probeReader{r: bytes.NewReader(data), size: -1}
	b, err := p.readUpTo(5, 100)
	require.NoError(t, err)
	assert.Equal(t, []byte("56789"), b)
	b, err = p.readUpTo(8, 10) // served from the EOF-terminated window
	require.NoError(t, err)
	assert.Equal(t, []byte("89"), b)
	assert.Equal(t, 1, p.reads)
	_, err = p.read(8, 3)
	require.ErrorIs(t, err, ErrNoDuration)
	_, err = p.readUpTo(-1, 3)
	require.ErrorIs(t, err, ErrNoDuration)
	_, err = p.readUpTo(math.MaxInt64-1, 3)
	require.ErrorIs(t, err, ErrNoDuration)
	_, err = p.readUpTo(0, probeWindow+1)
	require.ErrorIs(t, err, ErrNoDuration)

	p = &probeReader{r: bytes.NewReader(data), size: 4}
	b, err = p.readUpTo(2, 10)
	require.NoError(t, err)
	assert.Equal(t, []byte("23"), b, "clamped to the declared size")
	b, err = p.readUpTo(4, 10)
	require.NoError(t, err)
	assert.Empty(t, b)

	var _ io.ReaderAt = (*probeTestSparse)(nil)
}

func TestProbeRatioDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		num, den uint64
		want     time.Duration
		ok       bool
	}{
		{"one second", 44100, 44100, time.Second, true},
		{"fraction", 1, 3, 333333333, true},
		{"zero num", 0, 1, 0, false},
		{"zero den", 1, 0, 0, false},
		{"below 1ns", 1, 2e9, 0, false},
		{"max", math.MaxInt64 / uint64(time.Second), 1, math.MaxInt64 / time.Second * time.Second, true},
		{"overflow", math.MaxUint64, 1, 0, false},
		{"overflow int64", 1e10, 1, 0, false},
		{"big num and den", math.MaxUint64, math.MaxUint64 / 2, 2 * time.Second, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, ok := probeRatioDuration(tc.num, tc.den)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, d)
		})
	}
}
