package sim

// MediaFormat is the encoding of a media file's first video and audio
// streams, which the fragments of one artifact must share. Zero fields are
// unknown.
type MediaFormat struct {
	VideoCodec string `json:"video_codec,omitempty"` // ffprobe's codec name: h264, mpeg4, mjpeg, vp9...
	Width      int    `json:"width,omitempty"`       // pixels
	Height     int    `json:"height,omitempty"`      // pixels
	// FrameRate is in thousandths of a frame per second (29.97 fps is
	// 29970), so that rates read from different containers compare exactly.
	FrameRate  int    `json:"frame_rate_milli,omitempty"`
	AudioCodec string `json:"audio_codec,omitempty"` // pcm_s16le, aac, mp3, flac, opus...
	SampleRate int    `json:"sample_rate,omitempty"` // Hz
	Channels   int    `json:"channels,omitempty"`
}

// Known reports whether anything is known of the format.
func (f MediaFormat) Known() bool { return f != MediaFormat{} }

// HasVideo reports whether the file has a video stream.
func (f MediaFormat) HasVideo() bool { return f.VideoCodec != "" || f.Width > 0 || f.Height > 0 }

// Messages of an artifact whose fragments differ in format; fragments count
// from 1.
const (
	MsgFragmentMismatch = "Fragment %d (%s): %s %s differs from fragment %d's %s; all fragments must share codec, resolution and frame rate"
	MsgFragmentVideo    = "Fragment %d (%s) has a video track and fragment %d has none; all fragments must share codec, resolution and frame rate"
	MsgFragmentNoVideo  = "Fragment %d (%s) has no video track and fragment %d has one; all fragments must share codec, resolution and frame rate"
)
