package probe

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"
)

// mp4Stream is what mp4MoovStreams learns of one trak.
type mp4Stream struct {
	handler   string // hdlr handler_type: "vide", "soun", ...
	timescale uint64 // mdhd
	entry     string // the four-character code of the first stsd entry
	width     int    // visual sample entry
	height    int
	rate      int // audio sample entry (Hz)
	channels  int
	frameRate float64 // from stts and the timescale
}

// mp4SttsMaxEntries bounds the stts entries read for the frame rate.
const mp4SttsMaxEntries = 8192

// mp4MoovStreams fills mi with the first video and the first audio track
// among traks: codec and size from the first stsd entry, the sample rate and
// channels of a sound sample entry (the mdhd timescale when the entry has
// no rate), the frame rate from stts. Best effort: a broken or missing box
// leaves its facts unknown.
func mp4MoovStreams(p *probeReader, traks []mp4Box, mi *MediaInfo) {
	var video, sound *mp4Stream
	for _, b := range traks {
		st := mp4ParseStream(p, b)
		switch {
		case st.handler == "vide" && video == nil:
			video = &st
		case st.handler == "soun" && sound == nil:
			sound = &st
		}
		if video != nil && sound != nil {
			break
		}
	}
	if video != nil {
		mi.VideoCodec = mp4CodecName(video.entry)
		mi.Width, mi.Height, mi.FrameRate = video.width, video.height, video.frameRate
	}
	if sound != nil {
		mi.AudioCodec = mp4CodecName(sound.entry)
		mi.SampleRate, mi.Channels = sound.rate, sound.channels
		if (mi.SampleRate == 0 || mi.SampleRate == math.MaxUint16) && sound.timescale > 0 && sound.timescale <= 1<<20 {
			// No rate, or one clamped to the 16.16 field: audio tracks
			// use the sample rate as their timescale.
			mi.SampleRate = int(sound.timescale)
		}
	}
}

// mp4ParseStream reads trak/mdia: mdhd, hdlr and minf/stbl (stsd, stts).
func mp4ParseStream(p *probeReader, trak mp4Box) mp4Stream {
	var (
		st       mp4Stream
		stts     mp4Box
		haveStts bool
		entry    []byte // the first stsd entry's payload (a prefix)
	)
	_ = mp4Walk(p, trak.dataOff, trak.end, func(b mp4Box) (bool, error) {
		if b.typ != "mdia" {
			return false, nil
		}
		return true, mp4Walk(p, b.dataOff, b.end, func(c mp4Box) (bool, error) {
			switch c.typ {
			case "mdhd":
				ts, _, err := mp4ReadTimes(p, c)
				st.timescale = ts
				return false, err
			case "hdlr":
				// version/flags(4) pre_defined(4) handler_type(4)
				if c.end-c.dataOff >= 12 {
					h, err := p.read(c.dataOff+8, 4)
					if err != nil {
						return true, err
					}
					st.handler = string(h)
				}
			case "minf":
				return false, mp4Walk(p, c.dataOff, c.end, func(d mp4Box) (bool, error) {
					if d.typ != "stbl" {
						return false, nil
					}
					return true, mp4Walk(p, d.dataOff, d.end, func(e mp4Box) (bool, error) {
						switch e.typ {
						case "stsd":
							var err error
							st.entry, entry, err = mp4ReadStsd(p, e)
							return false, err
						case "stts":
							stts, haveStts = e, true
						}
						return false, nil
					})
				})
			}
			return false, nil
		})
	})
	switch st.handler {
	case "vide":
		// SampleEntry: reserved(6) data_reference_index(2); then
		// VisualSampleEntry: pre_defined(2) reserved(2) pre_defined(12)
		// width(2) height(2) resolution(8) reserved(4) frame_count(2)
		// compressorname(32) depth(2) pre_defined(2), then child boxes.
		if len(entry) >= 28 {
			st.width = int(binary.BigEndian.Uint16(entry[24:26]))
			st.height = int(binary.BigEndian.Uint16(entry[26:28]))
		}
		if st.entry == "mp4v" {
			if asc, oti, ok := mp4Esds(entry, 78); ok {
				st.entry = mp4ObjectType(oti, asc, &st)
			}
		}
		if haveStts {
			st.frameRate = mp4FrameRate(p, stts, st.timescale)
		}
	case "soun":
		mp4SoundEntry(entry, &st)
	}
	return st
}

// mp4SoundEntry reads a sound sample entry: SampleEntry (8), then
// version(2) revision(2) vendor(4) and, for versions 0 and 1,
// channelcount(2) samplesize(2) compression_id(2) packet_size(2)
// samplerate(16.16) (version 1 adds 16 bytes); QuickTime version 2 has
// always3(2) always16(2) always-2(2) always0(2) always65536(4)
// sizeOfStructOnly(4) sampleRate(float64) channels(4) always7F000000(4)
// bitsPerChannel(4) formatFlags(4) bytesPerPacket(4) framesPerPacket(4).
// Child boxes follow; an esds box gives AAC's true channel count and rate.
func mp4SoundEntry(entry []byte, st *mp4Stream) {
	if len(entry) < 28 {
		return
	}
	children := 28
	switch binary.BigEndian.Uint16(entry[8:10]) {
	case 0, 1:
		st.channels = int(binary.BigEndian.Uint16(entry[16:18]))
		st.rate = int(binary.BigEndian.Uint32(entry[24:28]) >> 16)
		if binary.BigEndian.Uint16(entry[8:10]) == 1 {
			children += 16
		}
	case 2:
		if len(entry) < 64 {
			return
		}
		if r := math.Float64frombits(binary.BigEndian.Uint64(entry[32:40])); r >= 1 && r <= 1<<20 {
			st.rate = int(math.Round(r))
		}
		if c := binary.BigEndian.Uint32(entry[40:44]); c <= 1024 {
			st.channels = int(c)
		}
		if st.entry == "lpcm" {
			st.entry = mp4LPCMName(binary.BigEndian.Uint32(entry[48:52]), binary.BigEndian.Uint32(entry[52:56]))
		}
		children = 64
	default:
		return
	}
	if st.entry == "mp4a" {
		if asc, oti, ok := mp4Esds(entry, children); ok {
			st.entry = mp4ObjectType(oti, asc, st)
		}
	}
}

// mp4LPCMName names QuickTime lpcm audio from its bits per channel and
// format flags (1 float, 2 big-endian, 4 signed integer).
func mp4LPCMName(bits, flags uint32) string {
	kind := "u"
	switch {
	case flags&1 != 0:
		kind = "f"
	case flags&4 != 0:
		kind = "s"
	}
	if bits == 8 {
		return "pcm_" + kind + "8"
	}
	end := "le"
	if flags&2 != 0 {
		end = "be"
	}
	return "pcm_" + kind + strconv.FormatUint(uint64(bits), 10) + end
}

// mp4Esds finds the esds box among the child boxes of a sample entry (from
// offset at in its payload) and returns the objectTypeIndication of its
// DecoderConfigDescriptor and its DecoderSpecificInfo (for AAC, the
// AudioSpecificConfig).
func mp4Esds(entry []byte, at int) (asc []byte, oti byte, ok bool) {
	for at+8 <= len(entry) {
		size := int(binary.BigEndian.Uint32(entry[at : at+4]))
		if size < 8 || size > len(entry)-at {
			size = len(entry) - at // a box cut by the read prefix
		}
		if string(entry[at+4:at+8]) == "esds" {
			return mp4ParseEsds(entry[at+8 : at+size])
		}
		at += size
	}
	return nil, 0, false
}

// mp4ParseEsds reads an esds payload: version/flags(4), then an
// ES_Descriptor (tag 3) holding a DecoderConfigDescriptor (tag 4) holding a
// DecoderSpecificInfo (tag 5).
func mp4ParseEsds(b []byte) (asc []byte, oti byte, ok bool) {
	if len(b) < 4 {
		return nil, 0, false
	}
	b = b[4:]
	// descriptor returns the payload of the descriptor of tag at the
	// start of b.
	descriptor := func(b []byte, tag byte) (body []byte, ok bool) {
		if len(b) < 2 || b[0] != tag {
			return nil, false
		}
		n, i := 0, 1
		for ; i < 5 && i < len(b); i++ {
			n = n<<7 | int(b[i]&0x7F)
			if b[i]&0x80 == 0 {
				break
			}
		}
		if i >= len(b) || i == 5 {
			return nil, false
		}
		body = b[i+1:]
		return body[:min(n, len(body))], true
	}
	es, ok := descriptor(b, 3)
	if !ok || len(es) < 3 {
		return nil, 0, false
	}
	// ES_ID(2) flags(1)
	flags := es[2]
	es = es[3:]
	if flags&0x80 != 0 { // streamDependenceFlag
		es = es[min(2, len(es)):]
	}
	if flags&0x40 != 0 && len(es) > 0 { // URL_Flag
		es = es[min(1+int(es[0]), len(es)):]
	}
	if flags&0x20 != 0 { // OCRstreamFlag
		es = es[min(2, len(es)):]
	}
	dc, ok := descriptor(es, 4)
	if !ok || len(dc) < 13 {
		return nil, 0, false
	}
	oti = dc[0]
	// objectTypeIndication(1) streamType(1) bufferSizeDB(3)
	// maxBitrate(4) avgBitrate(4)
	asc, _ = descriptor(dc[13:], 5)
	return asc, oti, true
}

// mp4ObjectTypes names the codecs of MPEG-4 objectTypeIndications.
var mp4ObjectTypes = map[byte]string{
	0x20: "mpeg4", 0x21: "h264", 0x23: "hevc", 0x6A: "mpeg1video", 0x6C: "mjpeg",
	0x60: "mpeg2video", 0x61: "mpeg2video", 0x62: "mpeg2video", 0x63: "mpeg2video", 0x64: "mpeg2video", 0x65: "mpeg2video",
	0x69: "mp3", 0x6B: "mp3", 0xA5: "ac3", 0xA6: "eac3", 0xAD: "opus",
	0x40: "aac", 0x66: "aac", 0x67: "aac", 0x68: "aac",
}

// mp4ObjectType names the codec of an MPEG-4 objectTypeIndication and, for
// AAC, reads the channel count and sample rate of its AudioSpecificConfig.
func mp4ObjectType(oti byte, asc []byte, st *mp4Stream) string {
	name, ok := mp4ObjectTypes[oti]
	if !ok {
		return "mp4_0x" + strconv.FormatUint(uint64(oti), 16)
	}
	if name == "aac" {
		if rate, channels, ok := mp4AudioSpecificConfig(asc); ok {
			if rate > 0 {
				st.rate = rate
			}
			if channels > 0 {
				st.channels = channels
			}
		}
	}
	return name
}

// mp4AACRates are the sampling frequencies of an AudioSpecificConfig index.
var mp4AACRates = [13]int{96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350}

// mp4AudioSpecificConfig reads audioObjectType (5 bits, or 5+6 when 31),
// samplingFrequencyIndex (4 bits, or 4+24 when 15) and
// channelConfiguration (4 bits). Channel configuration 7 is 7.1 (8
// channels); 0 (given in a program config element) is returned as 0.
func mp4AudioSpecificConfig(asc []byte) (rate, channels int, ok bool) {
	var first8 [8]byte
	copy(first8[:], asc)
	acc := binary.BigEndian.Uint64(first8[:])
	bitsAvail := 8 * min(len(asc), 8)
	pos := 0
	take := func(n int) uint64 {
		v := acc << pos >> (64 - n)
		pos += n
		return v
	}
	if take(5) == 31 {
		take(6)
	}
	if sfi := take(4); sfi == 15 {
		rate = int(take(24))
	} else if sfi < uint64(len(mp4AACRates)) {
		rate = mp4AACRates[sfi]
	}
	cc := int(take(4))
	if pos > bitsAvail {
		return 0, 0, false
	}
	channels = cc
	if cc == 7 {
		channels = 8
	}
	return rate, channels, true
}

// mp4StsdEntryPrefix is how many bytes of the first sample entry are read.
const mp4StsdEntryPrefix = 512

// mp4ReadStsd returns the type and a payload prefix of the first sample
// entry of an stsd box: version/flags(4) entry_count(4), then the entries.
func mp4ReadStsd(p *probeReader, stsd mp4Box) (string, []byte, error) {
	if stsd.end-stsd.dataOff < 16 {
		return "", nil, probeMalformed("mp4", "stsd too short")
	}
	e, err := mp4ReadBox(p, stsd.dataOff+8, stsd.end)
	if err != nil {
		return "", nil, err
	}
	n := min(e.end-e.dataOff, mp4StsdEntryPrefix)
	b, err := p.read(e.dataOff, int(n))
	if err != nil {
		return "", nil, err
	}
	return e.typ, b, nil
}

// mp4FrameRate returns timescale / the sample delta that covers the most
// samples in stts (a constant-rate track has one entry; muxers often give
// the last sample its own), or 0 when stts is empty, too long or broken.
func mp4FrameRate(p *probeReader, stts mp4Box, timescale uint64) float64 {
	if timescale == 0 || stts.end-stts.dataOff < 8 {
		return 0
	}
	h, err := p.read(stts.dataOff, 8)
	if err != nil {
		return 0
	}
	count := int64(binary.BigEndian.Uint32(h[4:8]))
	if count == 0 || count > mp4SttsMaxEntries || count > (stts.end-stts.dataOff-8)/8 {
		return 0
	}
	var best, bestCount uint64
	err = mp4Entries(p, stts.dataOff+8, count, 8, func(e []byte) {
		c, d := uint64(binary.BigEndian.Uint32(e)), uint64(binary.BigEndian.Uint32(e[4:]))
		if d > 0 && c > bestCount {
			best, bestCount = d, c
		}
	})
	if err != nil || best == 0 {
		return 0
	}
	return float64(timescale) / float64(best)
}

// mp4Codecs maps sample entry types to ffprobe's codec names.
var mp4Codecs = map[string]string{
	"avc1": "h264", "avc3": "h264", "hvc1": "hevc", "hev1": "hevc", "mp4v": "mpeg4", "av01": "av1",
	"vp08": "vp8", "vp09": "vp9", "jpeg": "mjpeg", "mjpa": "mjpeg", "mjpb": "mjpeg",
	"apch": "prores", "apcn": "prores", "apcs": "prores", "apco": "prores", "ap4h": "prores", "ap4x": "prores",
	"s263": "h263", "h263": "h263", "mp4a": "aac", ".mp3": "mp3", "ac-3": "ac3", "ec-3": "eac3",
	"Opus": "opus", "fLaC": "flac", "alac": "alac", "sowt": "pcm_s16le", "twos": "pcm_s16be",
	"raw ": "pcm_u8", "ulaw": "pcm_mulaw", "alaw": "pcm_alaw",
}

// mp4CodecName maps a sample entry type to ffprobe's codec name; unknown
// types are returned as they are, without trailing spaces.
func mp4CodecName(entry string) string {
	if name, ok := mp4Codecs[entry]; ok {
		return name
	}
	return strings.TrimRight(entry, " \x00")
}
