package probe

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ---- builders of stream headers ----

// probeTestStreamTrak builds a trak of handler hdlr with an mdhd of
// timescale, an stsd holding entry and an stts of sttsEntries (count,
// delta pairs).
func probeTestStreamTrak(hdlr string, timescale uint32, entry []byte, stts ...uint32) []byte {
	sttsBody := probeTestCat([]byte{0, 0, 0, 0}, probeTestBE32(uint32(len(stts)/2)))
	for _, v := range stts {
		sttsBody = append(sttsBody, probeTestBE32(v)...)
	}
	return probeTestBox("trak",
		probeTestBox("tkhd", make([]byte, 84)),
		probeTestBox("mdia", probeTestMdhd(0, timescale, uint64(timescale)*3),
			probeTestBox("hdlr", make([]byte, 8), []byte(hdlr), make([]byte, 13)),
			probeTestBox("minf", probeTestBox("stbl",
				probeTestBox("stsd", []byte{0, 0, 0, 0}, probeTestBE32(1), entry),
				probeTestBox("stts", sttsBody)))))
}

// probeTestVisualEntry is a visual sample entry of type typ and size w×h.
func probeTestVisualEntry(typ string, w, h uint16, children ...[]byte) []byte {
	return probeTestBox(typ, make([]byte, 8), make([]byte, 16), probeTestBE16(w), probeTestBE16(h),
		make([]byte, 50), probeTestCat(children...))
}

// probeTestSoundEntry is a version-0 sound sample entry.
func probeTestSoundEntry(typ string, channels uint16, rate uint32, children ...[]byte) []byte {
	return probeTestBox(typ, make([]byte, 8), make([]byte, 8), probeTestBE16(channels), probeTestBE16(16),
		make([]byte, 4), probeTestBE32(rate<<16), probeTestCat(children...))
}

// probeTestEsds is an esds box with objectTypeIndication oti and the
// decoder-specific info dsi.
func probeTestEsds(oti byte, dsi []byte) []byte {
	dc := probeTestCat([]byte{0x04, byte(13 + 2 + len(dsi)), oti, 0x15}, make([]byte, 11), []byte{0x05, byte(len(dsi))}, dsi)
	es := probeTestCat([]byte{0x03, 0x80, 0x80, 0x80, byte(3 + len(dc))}, probeTestBE16(1), []byte{0}, dc)
	return probeTestBox("esds", []byte{0, 0, 0, 0}, es)
}

// probeTestMP4AV is an MP4 with a video trak (entry, timescale, stts) and
// an AAC trak (48 kHz in the entry; the AudioSpecificConfig asc).
func probeTestMP4AV(video []byte, timescale uint32, stts []uint32, asc []byte) []byte {
	return probeTestCat(probeTestFtyp("isom"),
		probeTestBox("moov", probeTestMvhd(0, 1000, 3000),
			probeTestStreamTrak("vide", timescale, video, stts...),
			probeTestStreamTrak("soun", 48000, probeTestSoundEntry("mp4a", 2, 48000, probeTestEsds(0x40, asc)), 1, 1024)),
		probeTestBox("mdat", make([]byte, 100)))
}

// probeTestMKVTracks is a Matroska file with one video and one audio track.
func probeTestMKVTracks(vCodec string, w, h, defaultDuration uint64, aCodec string, rate float64, channels, bitDepth uint64) []byte {
	audio := [][]byte{probeTestEBMLFloat(mkvIDSamplingFrequency, rate, 8), probeTestEBMLUint(mkvIDChannels, channels)}
	if bitDepth > 0 {
		audio = append(audio, probeTestEBMLUint(mkvIDBitDepth, bitDepth))
	}
	tracks := probeTestEl(mkvIDTracks,
		probeTestEl(mkvIDTrackEntry, probeTestEBMLUint(0xD7, 1), probeTestEBMLUint(mkvIDTrackType, mkvTrackVideo),
			probeTestEl(mkvIDCodecID, []byte(vCodec)), probeTestEBMLUint(mkvIDDefaultDuration, defaultDuration),
			probeTestEl(mkvIDVideo, probeTestEBMLUint(mkvIDPixelWidth, w), probeTestEBMLUint(mkvIDPixelHeight, h))),
		probeTestEl(mkvIDTrackEntry, probeTestEBMLUint(0xD7, 2), probeTestEBMLUint(mkvIDTrackType, mkvTrackAudio),
			probeTestEl(mkvIDCodecID, []byte(aCodec)), probeTestEl(mkvIDAudio, audio...)))
	return probeTestMKV("matroska", probeTestInfo(0, 3000, 8), tracks,
		probeTestEl(mkvIDCluster, probeTestEBMLUint(0xE7, 0), probeTestEl(0xA3, make([]byte, 50))))
}

// probeTestStreamCases are headers whose stream facts are known.
func probeTestStreamCases() []struct {
	name string
	data []byte
	want MediaInfo
} {
	aac48kStereo := []byte{0x11, 0x90}                  // AAC LC, 48 kHz, 2 channels
	aac22kMono := []byte{0x13, 0x88}                    // AAC LC, 22.05 kHz, 1 channel
	aacExplicit := []byte{0x17, 0x80, 0x7D, 0x00, 0x08} // AAC LC, explicit 64000 Hz, 1 channel
	return []struct {
		name string
		data []byte
		want MediaInfo
	}{
		{"wav pcm 16-bit stereo 44.1k", probeTestWAV(probeTestWAVOpts{rate: 44100, channels: 2, bits: 16, frames: 4410}),
			MediaInfo{AudioCodec: "pcm_s16le", SampleRate: 44100, Channels: 2}},
		{"wav pcm 8-bit mono 8k", probeTestWAV(probeTestWAVOpts{rate: 8000, channels: 1, bits: 8, frames: 800}),
			MediaInfo{AudioCodec: "pcm_u8", SampleRate: 8000, Channels: 1}},
		{"wav extensible 24-bit 6 channels 96k", probeTestWAV(probeTestWAVOpts{rate: 96000, channels: 6, bits: 24, frames: 960, extensible: true}),
			MediaInfo{AudioCodec: "pcm_s24le", SampleRate: 96000, Channels: 6}},
		{"flac", probeTestCat([]byte("fLaC"), []byte{0x80, 0, 0, 34}, make([]byte, 10),
			[]byte{0x0B, 0xB8, 0x02, 0xF0, 0x00, 0x01, 0x5F, 0x90}, make([]byte, 16)), // 48 kHz, 2 ch, 90000 samples
			MediaInfo{AudioCodec: "flac", SampleRate: 48000, Channels: 2}},
		{"mp3 MPEG-1 layer III stereo", probeTestMP3Frames(probeTestMP3Header128, 20),
			MediaInfo{AudioCodec: "mp3", SampleRate: 44100, Channels: 2}},
		{"mp3 MPEG-2 layer III mono", probeTestMP3Frames([]byte{0xFF, 0xF3, 0x80, 0xC0}, 20),
			MediaInfo{AudioCodec: "mp3", SampleRate: 22050, Channels: 1}},
		{"mp2", probeTestMP3Frames([]byte{0xFF, 0xFD, 0xA0, 0x00}, 20),
			MediaInfo{AudioCodec: "mp2", SampleRate: 44100, Channels: 2}},
		{"mp4 h264 640x360 25 fps, aac 48k stereo",
			probeTestMP4AV(probeTestVisualEntry("avc1", 640, 360), 12800, []uint32{74, 512, 1, 256}, aac48kStereo),
			MediaInfo{VideoCodec: "h264", Width: 640, Height: 360, FrameRate: 25, AudioCodec: "aac", SampleRate: 48000, Channels: 2}},
		{"mp4 mpeg4 via esds 30000/1001, aac 22.05k mono",
			probeTestMP4AV(probeTestVisualEntry("mp4v", 320, 240, probeTestEsds(0x20, nil)), 30000, []uint32{90, 1001}, aac22kMono),
			MediaInfo{VideoCodec: "mpeg4", Width: 320, Height: 240, FrameRate: 30000.0 / 1001, AudioCodec: "aac", SampleRate: 22050, Channels: 1}},
		{"mp4 mjpeg via esds, explicit AAC rate",
			probeTestMP4AV(probeTestVisualEntry("mp4v", 64, 48, probeTestEsds(0x6C, nil)), 1000, []uint32{3, 1000}, aacExplicit),
			MediaInfo{VideoCodec: "mjpeg", Width: 64, Height: 48, FrameRate: 1, AudioCodec: "aac", SampleRate: 64000, Channels: 1}},
		{"mp4 hevc without stts entries",
			probeTestMP4AV(probeTestVisualEntry("hvc1", 1920, 1080), 90000, nil, aac48kStereo),
			MediaInfo{VideoCodec: "hevc", Width: 1920, Height: 1080, AudioCodec: "aac", SampleRate: 48000, Channels: 2}},
		{"mkv h264 1280x720 50 fps, opus",
			probeTestMKVTracks("V_MPEG4/ISO/AVC", 1280, 720, 20_000_000, "A_OPUS", 48000, 2, 0),
			MediaInfo{VideoCodec: "h264", Width: 1280, Height: 720, FrameRate: 50, AudioCodec: "opus", SampleRate: 48000, Channels: 2}},
		{"mkv vp9 23.976 fps, pcm 24-bit",
			probeTestMKVTracks("V_VP9", 320, 180, 41_708_333, "A_PCM/INT/LIT", 44100, 1, 24),
			MediaInfo{VideoCodec: "vp9", Width: 320, Height: 180, FrameRate: 1e9 / 41_708_333, AudioCodec: "pcm_s24le", SampleRate: 44100, Channels: 1}},
	}
}

func TestProbeStreams(t *testing.T) {
	t.Parallel()
	for _, tc := range probeTestStreamCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := &probeTestCountingReader{r: bytes.NewReader(tc.data)}
			info, err := Probe(r, int64(len(tc.data)))
			require.NoError(t, err)
			assert.Positive(t, info.Duration)
			tc.want.Format, tc.want.Duration = info.Format, info.Duration
			assert.InDelta(t, tc.want.FrameRate, info.FrameRate, 1e-9, "frame rate")
			tc.want.FrameRate = info.FrameRate
			assert.Equal(t, tc.want, info)
			assert.EqualValues(t, 1, r.calls.Load(), "one ReadAt for a small file")
		})
	}
}

// A broken stream header never fails a probe that found the duration: the
// facts stay unknown.
func TestProbeStreamsBestEffort(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		data []byte
	}{
		{"mp4 stsd too short", probeTestCat(probeTestFtyp("isom"), probeTestBox("moov", probeTestMvhd(0, 1000, 3000),
			probeTestBox("trak", probeTestBox("mdia", probeTestBox("hdlr", make([]byte, 8), []byte("vide"), make([]byte, 13)),
				probeTestBox("minf", probeTestBox("stbl", probeTestBox("stsd", []byte{0, 0, 0, 0})))))))},
		{"mp4 stts claims too many entries", func() []byte {
			b := probeTestCat(probeTestFtyp("isom"), probeTestBox("moov", probeTestMvhd(0, 1000, 3000),
				probeTestStreamTrak("vide", 1000, probeTestVisualEntry("avc1", 8, 8), 75, 40)))
			i := bytes.Index(b, []byte("stts"))
			copy(b[i+8:], probeTestBE32(1000)) // entry_count, with one entry present
			return b
		}()},
		{"mkv Tracks of broken size", probeTestMKV("matroska", probeTestInfo(0, 3000, 8),
			probeTestCat(probeTestID(mkvIDTracks), probeTestVint(1000, 0), probeTestID(mkvIDTrackEntry), []byte{0x00}))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			info, err := Probe(bytes.NewReader(tc.data), int64(len(tc.data)))
			require.NoError(t, err)
			assert.Equal(t, 3*time.Second, info.Duration)
			assert.Zero(t, info.FrameRate)
		})
	}
}
