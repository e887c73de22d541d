package engine

import (
	"fmt"
	"testing"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
)

func TestFragmentMismatch(t *testing.T) {
	t.Parallel()
	frags := []sim.Fragment{
		{S3Path: "s3://dubsim-artifacts/temp/u1/a.wav"},
		{URL: "http://127.0.0.1:9/b.wav", StartTime: 10},
		{S3Path: "s3://client-bucket/c.wav", StartTime: 20},
	}
	src := func(i int) string { return fragmentSource(frags[i-1]) }
	mismatch := func(i int, fact, got string, ref int, want string) string {
		return fmt.Sprintf(sim.MsgFragmentMismatch, i, src(i), fact, got, ref, want)
	}
	wav := sim.MediaFormat{AudioCodec: "pcm_s16le", SampleRate: 44100, Channels: 2}
	h264 := sim.MediaFormat{VideoCodec: "h264", Width: 640, Height: 360, FrameRate: 25000, AudioCodec: "aac", SampleRate: 48000, Channels: 2}
	with := func(f sim.MediaFormat, change func(*sim.MediaFormat)) sim.MediaFormat { change(&f); return f }
	var unknown sim.MediaFormat

	tests := []struct {
		name  string
		media []sim.MediaFormat
		want  string
	}{
		{"all equal audio", []sim.MediaFormat{wav, wav, wav}, ""},
		{"all equal video", []sim.MediaFormat{h264, h264, h264}, ""},
		{"no format known", []sim.MediaFormat{unknown, unknown, unknown}, ""},
		{"one fragment known", []sim.MediaFormat{unknown, wav, unknown}, ""},
		{"fewer formats than fragments", []sim.MediaFormat{wav}, ""},
		{"audio codec", []sim.MediaFormat{wav, with(wav, func(f *sim.MediaFormat) { f.AudioCodec = "pcm_f32le" })},
			mismatch(2, "audio codec", "pcm_f32le", 1, "pcm_s16le")},
		{"sample rate", []sim.MediaFormat{wav, with(wav, func(f *sim.MediaFormat) { f.SampleRate = 22050 })},
			mismatch(2, "sample rate", "22050 Hz", 1, "44100 Hz")},
		{"channel count", []sim.MediaFormat{wav, wav, with(wav, func(f *sim.MediaFormat) { f.Channels = 1 })},
			mismatch(3, "channel count", "1", 1, "2")},
		{"video codec", []sim.MediaFormat{h264, with(h264, func(f *sim.MediaFormat) { f.VideoCodec = "mpeg4" })},
			mismatch(2, "video codec", "mpeg4", 1, "h264")},
		{"resolution", []sim.MediaFormat{h264, with(h264, func(f *sim.MediaFormat) { f.Width, f.Height = 1280, 720 })},
			mismatch(2, "resolution", "1280x720", 1, "640x360")},
		{"same width, other height", []sim.MediaFormat{h264, with(h264, func(f *sim.MediaFormat) { f.Height = 480 })},
			mismatch(2, "resolution", "640x480", 1, "640x360")},
		{"frame rate", []sim.MediaFormat{h264, h264, with(h264, func(f *sim.MediaFormat) { f.FrameRate = 29970 })},
			mismatch(3, "frame rate", "29.97 fps", 1, "25 fps")},
		{"the audio of video fragments is not compared", []sim.MediaFormat{h264, with(h264, func(f *sim.MediaFormat) { f.AudioCodec, f.SampleRate, f.Channels = "opus", 44100, 1 })}, ""},
		{"video after audio", []sim.MediaFormat{wav, h264},
			fmt.Sprintf(sim.MsgFragmentVideo, 2, src(2), 1)},
		{"audio after video", []sim.MediaFormat{h264, unknown, wav},
			fmt.Sprintf(sim.MsgFragmentNoVideo, 3, src(3), 1)},
		{"first mismatch wins: earlier fragment", []sim.MediaFormat{wav,
			with(wav, func(f *sim.MediaFormat) { f.Channels = 1 }),
			with(wav, func(f *sim.MediaFormat) { f.SampleRate = 8000 })},
			mismatch(2, "channel count", "1", 1, "2")},
		{"first mismatch wins: earlier fact", []sim.MediaFormat{h264,
			with(h264, func(f *sim.MediaFormat) { f.Width, f.FrameRate = 320, 50000 })},
			mismatch(2, "resolution", "320x360", 1, "640x360")},
		{"unknown fragments are skipped", []sim.MediaFormat{unknown, wav, with(wav, func(f *sim.MediaFormat) { f.SampleRate = 48000 })},
			mismatch(3, "sample rate", "48000 Hz", 2, "44100 Hz")},
		{"a fact is compared with the first fragment that has it", []sim.MediaFormat{
			with(h264, func(f *sim.MediaFormat) { f.FrameRate = 0 }), h264, with(h264, func(f *sim.MediaFormat) { f.FrameRate = 30000 })},
			mismatch(3, "frame rate", "30 fps", 2, "25 fps")},
		{"an unknown fact is not compared", []sim.MediaFormat{wav, with(wav, func(f *sim.MediaFormat) { f.SampleRate = 0 }), wav}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, fragmentMismatch(frags, tc.media))
		})
	}
}

func TestRecordPartMedia(t *testing.T) {
	t.Parallel()
	frags := []sim.Fragment{{URL: "http://127.0.0.1:9/a.wav"}, {URL: "http://127.0.0.1:9/b.wav"}}
	a := sim.MediaFormat{AudioCodec: "pcm_s16le", SampleRate: 44100, Channels: 1}
	b := sim.MediaFormat{AudioCodec: "pcm_s16le", SampleRate: 22050, Channels: 1}
	differ := fmt.Sprintf(sim.MsgFragmentMismatch, 2, frags[1].URL, "sample rate", "22050 Hz", 1, "44100 Hz")

	tests := []struct {
		name      string
		frags     []sim.Fragment
		res       sim.ArtifactResult
		media     []sim.MediaFormat
		wantFail  string
		wantMedia []sim.MediaFormat
	}{
		{"known result: compared now", frags, sim.ArtifactResult{Known: true}, []sim.MediaFormat{a, b}, differ, nil},
		{"known result, same format", frags, sim.ArtifactResult{Known: true}, []sim.MediaFormat{a, a}, "", nil},
		{"uploads pending: formats kept", frags, sim.ArtifactResult{}, []sim.MediaFormat{a, {}}, "", []sim.MediaFormat{a, {}}},
		{"uploads pending, nothing read: nothing kept", frags, sim.ArtifactResult{}, []sim.MediaFormat{{}, {}}, "", nil},
		{"failed already: the first failure stays", frags, sim.ArtifactResult{Known: true, Fail: "download failed"}, []sim.MediaFormat{a, b}, "download failed", nil},
		{"not a fragments artifact", nil, sim.ArtifactResult{Known: true}, []sim.MediaFormat{a}, "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := tc.res
			recordPartMedia(tc.frags, &res, tc.media)
			assert.Equal(t, tc.wantFail, res.Fail)
			assert.Equal(t, tc.wantMedia, res.Media)
		})
	}
}
