package probe

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Matroska element IDs of the Tracks element.
const (
	mkvIDTracks            = 0x1654AE6B
	mkvIDTrackEntry        = 0xAE
	mkvIDTrackType         = 0x83
	mkvIDCodecID           = 0x86
	mkvIDDefaultDuration   = 0x23E383
	mkvIDVideo             = 0xE0
	mkvIDPixelWidth        = 0xB0
	mkvIDPixelHeight       = 0xBA
	mkvIDAudio             = 0xE1
	mkvIDSamplingFrequency = 0xB5
	mkvIDChannels          = 0x9F
	mkvIDBitDepth          = 0x6264

	mkvTrackVideo = 1
	mkvTrackAudio = 2

	// mkvMaxLevel1 bounds the level-1 elements visited looking for Tracks.
	mkvMaxLevel1 = 64
	// mkvMaxCodecID bounds the length of a CodecID string.
	mkvMaxCodecID = 64
)

// mkvTrack is what mkvSegmentTracks learns of one TrackEntry.
type mkvTrack struct {
	typ             uint64
	codecID         string
	defaultDuration uint64 // ns per frame
	width, height   uint64
	rate            float64
	channels        uint64
	bitDepth        uint64
}

// mkvLevel1 is where mkvSegmentDuration saw Tracks, so that
// mkvSegmentTracks finds them without scanning the Segment again.
type mkvLevel1 struct {
	tracks   mkvElem
	found    bool  // tracks is the Tracks element, met before Info
	seekPos  int64 // Tracks' Segment-relative position in the first SeekHead, or -1
	resumeAt int64 // the end of an Info met in order (Tracks may follow), or -1
}

// mkvSegmentTracks fills mi with the first video and the first audio
// TrackEntry of the Segment's Tracks: met before Info, listed in the first
// SeekHead, or met after Info and before the first Cluster. Best effort: a
// broken element leaves its facts unknown.
func mkvSegmentTracks(p *probeReader, segData, segEnd int64, l1 *mkvLevel1, mi *MediaInfo) {
	tracks, ok := l1.tracks, l1.found
	if !ok && l1.seekPos >= 0 && l1.seekPos <= probeInf-segData {
		t, err := mkvReadElem(p, segData+l1.seekPos)
		tracks, ok = t, err == nil && t.id == mkvIDTracks && !t.unknown
	}
	if !ok && l1.resumeAt >= 0 {
		tracks, ok = mkvFindTracks(p, l1.resumeAt, segEnd)
	}
	if !ok {
		return
	}
	var video, sound *mkvTrack
	n := 0
	_ = mkvWalk(p, tracks.dataOff, tracks.end(), func(e mkvElem) (bool, error) {
		if e.id != mkvIDTrackEntry || e.unknown {
			return e.unknown, nil
		}
		if n++; n > mp4MaxTracks {
			return true, nil
		}
		t, err := mkvParseTrack(p, e)
		if err != nil {
			return true, err
		}
		switch {
		case t.typ == mkvTrackVideo && video == nil:
			video = &t
		case t.typ == mkvTrackAudio && sound == nil:
			sound = &t
		}
		return video != nil && sound != nil, nil
	})
	if video != nil {
		mi.VideoCodec = mkvCodecName(video.codecID, 0)
		if video.width <= math.MaxInt32 && video.height <= math.MaxInt32 {
			mi.Width, mi.Height = int(video.width), int(video.height)
		}
		if video.defaultDuration > 0 {
			mi.FrameRate = 1e9 / float64(video.defaultDuration)
		}
	}
	if sound != nil {
		mi.AudioCodec = mkvCodecName(sound.codecID, sound.bitDepth)
		if sound.rate >= 1 && sound.rate <= 1<<20 {
			mi.SampleRate = int(math.Round(sound.rate))
		}
		if sound.channels <= 1024 {
			mi.Channels = int(sound.channels)
		}
	}
}

// mkvFindTracks scans level-1 elements from off for Tracks, up to the first
// Cluster.
func mkvFindTracks(p *probeReader, off, segEnd int64) (tracks mkvElem, ok bool) {
	n := 0
	_ = mkvWalk(p, off, segEnd, func(e mkvElem) (bool, error) {
		n++
		tracks, ok = e, e.id == mkvIDTracks && !e.unknown
		return n >= mkvMaxLevel1 || e.id == mkvIDTracks || e.id == mkvIDCluster, nil
	})
	return tracks, ok
}

// mkvParseTrack reads the fields of one TrackEntry.
func mkvParseTrack(p *probeReader, entry mkvElem) (mkvTrack, error) {
	t := mkvTrack{rate: 8000, channels: 1} // the Matroska defaults
	err := mkvChildren(p, entry, func(e mkvElem) (err error) {
		if e.unknown {
			return nil
		}
		switch e.id {
		case mkvIDTrackType:
			t.typ, err = mkvReadUint(p, e)
		case mkvIDCodecID:
			if e.size > mkvMaxCodecID {
				break
			}
			var b []byte
			if b, err = p.read(e.dataOff, int(e.size)); err == nil {
				t.codecID = strings.TrimRight(string(b), "\x00")
			}
		case mkvIDDefaultDuration:
			t.defaultDuration, err = mkvReadUint(p, e)
		case mkvIDVideo:
			err = mkvChildren(p, e, func(c mkvElem) (err error) {
				switch c.id {
				case mkvIDPixelWidth:
					t.width, err = mkvReadUint(p, c)
				case mkvIDPixelHeight:
					t.height, err = mkvReadUint(p, c)
				}
				return err
			})
		case mkvIDAudio:
			err = mkvChildren(p, e, func(c mkvElem) (err error) {
				switch c.id {
				case mkvIDSamplingFrequency:
					t.rate, err = mkvReadFloat(p, c)
				case mkvIDChannels:
					t.channels, err = mkvReadUint(p, c)
				case mkvIDBitDepth:
					t.bitDepth, err = mkvReadUint(p, c)
				}
				return err
			})
		}
		return err
	})
	return t, err
}

// mkvReadFloat reads a float element payload (0, 4 or 8 bytes).
func mkvReadFloat(p *probeReader, e mkvElem) (float64, error) {
	if e.unknown || (e.size != 0 && e.size != 4 && e.size != 8) {
		return 0, probeMalformed("matroska", fmt.Sprintf("float element 0x%X of size %d", e.id, e.size))
	}
	v, err := mkvReadUint(p, e)
	if e.size == 4 {
		return float64(math.Float32frombits(uint32(v))), err
	}
	return math.Float64frombits(v), err
}

// mkvCodecs maps Matroska CodecIDs to ffprobe's codec names.
var mkvCodecs = map[string]string{
	"V_MPEG4/ISO/AVC": "h264", "V_MPEGH/ISO/HEVC": "hevc", "V_MJPEG": "mjpeg", "V_VP8": "vp8", "V_VP9": "vp9",
	"V_AV1": "av1", "V_THEORA": "theora", "A_OPUS": "opus", "A_VORBIS": "vorbis", "A_FLAC": "flac",
	"A_MPEG/L3": "mp3", "A_MPEG/L2": "mp2", "A_AC3": "ac3", "A_EAC3": "eac3",
}

// mkvCodecName maps a Matroska CodecID to ffprobe's codec name (bitDepth
// picks the PCM variant); unknown IDs are returned lowercased.
func mkvCodecName(id string, bitDepth uint64) string {
	pcm := bitDepth == 16 || bitDepth == 24 || bitDepth == 32
	depth := strconv.FormatUint(bitDepth, 10)
	if name, ok := mkvCodecs[id]; ok {
		return name
	}
	switch {
	case strings.HasPrefix(id, "V_MPEG4/ISO/"):
		return "mpeg4"
	case strings.HasPrefix(id, "A_AAC"):
		return "aac"
	case id == "A_PCM/INT/LIT" && bitDepth == 8:
		return "pcm_u8"
	case id == "A_PCM/INT/LIT" && pcm:
		return "pcm_s" + depth + "le"
	case id == "A_PCM/INT/BIG" && pcm:
		return "pcm_s" + depth + "be"
	case id == "A_PCM/FLOAT/IEEE" && (bitDepth == 32 || bitDepth == 64):
		return "pcm_f" + depth + "le"
	}
	return strings.ToLower(id)
}
