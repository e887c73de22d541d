package audio

// A small but real QuickTime movie: ftyp, moov (computed up front, so it can
// come first for streaming), then one mdat holding a single Motion-JPEG frame
// followed by the 16-bit little-endian mono PCM samples of the track, in
// chunks of one second (longer when the track has more than movMaxChunks
// seconds, to keep the chunk tables small).
//
// Timescales: the movie and the video media use 1000 (milliseconds), the
// audio media uses the sample rate, so every duration is exact to the
// millisecond and the audio is exact to the sample. The video track has one
// sample whose duration spans the whole movie. Files larger than 4 GiB use
// co64 chunk offsets and a 64-bit mdat size.

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"math"
	"sync"
)

const (
	movWidth  = 320
	movHeight = 180
	// movMaxSampleRate is the highest rate of a version 0 sound description
	// (16.16 fixed point); higher track rates are clamped to it in a MOV.
	movMaxSampleRate = 65535
	// movMaxChunks bounds the audio chunk count (and so the moov size).
	movMaxChunks = 16384
	movTimescale = 1000
)

// movFrame is the JPEG of the video frame: SMPTE-like colour bars.
var movFrame = sync.OnceValue(func() []byte {
	img := image.NewRGBA(image.Rect(0, 0, movWidth, movHeight))
	bars := []color.RGBA{
		{191, 191, 191, 255}, {191, 191, 0, 255}, {0, 191, 191, 255}, {0, 191, 0, 255},
		{191, 0, 191, 255}, {191, 0, 0, 255}, {0, 0, 191, 255},
	}
	for y := range movHeight {
		for x := range movWidth {
			var c color.RGBA
			switch {
			case y < movHeight*2/3:
				c = bars[x*len(bars)/movWidth]
			case y < movHeight*3/4:
				c = color.RGBA{16, 16, 16, 255}
			default: // a grey ramp
				v := uint8(16 + x*(235-16)/(movWidth-1))
				c = color.RGBA{v, v, v, 255}
			}
			img.SetRGBA(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 80}); err != nil {
		panic("audio: encoding the video frame: " + err.Error())
	}
	return buf.Bytes()
})

// movAtom returns an atom of type typ holding the concatenated payloads.
func movAtom(typ string, payloads ...[]byte) []byte {
	n := 8
	for _, p := range payloads {
		n += len(p)
	}
	b := make([]byte, 0, n)
	b = binary.BigEndian.AppendUint32(b, uint32(n))
	b = append(b, typ...)
	for _, p := range payloads {
		b = append(b, p...)
	}
	return b
}

// movFields packs big-endian fields: fixed-size values (uint8 to uint64,
// []byte) and strings are appended as they are.
func movFields(vals ...any) []byte {
	var b []byte
	for _, v := range vals {
		if s, ok := v.(string); ok {
			v = []byte(s)
		}
		var err error
		if b, err = binary.Append(b, binary.BigEndian, v); err != nil {
			panic("audio: movFields: " + err.Error())
		}
	}
	return b
}

// movMatrix is the identity transformation matrix.
var movMatrix = movFields(
	uint32(0x00010000), uint32(0), uint32(0),
	uint32(0), uint32(0x00010000), uint32(0),
	uint32(0), uint32(0), uint32(0x40000000),
)

// movPascal returns s as a Pascal string, padded with zeros to size bytes
// when size > 0.
func movPascal(s string, size int) []byte {
	b := append([]byte{byte(len(s))}, s...)
	return append(b, make([]byte, max(0, size-len(b)))...)
}

type movLayout struct {
	sr         int
	samples    int64
	prefix     []byte // ftyp + moov + mdat header + JPEG frame
	chunkLen   int64  // samples per audio chunk
	chunks     int64
	durationMs uint32
}

func movBuild(t Track) movLayout {
	sr := min(synthSampleRate(t.SampleRate), movMaxSampleRate)
	n := synthSampleAt(t.Duration, sr)
	l := movLayout{sr: sr, samples: n, chunkLen: int64(sr)}
	if (n+l.chunkLen-1)/l.chunkLen > movMaxChunks {
		l.chunkLen = (n + movMaxChunks - 1) / movMaxChunks
	}
	l.chunks = (n + l.chunkLen - 1) / l.chunkLen
	l.durationMs = uint32((n*movTimescale + int64(sr)/2) / int64(sr))
	frame := movFrame()
	ftyp := movAtom("ftyp", movFields("qt  ", uint32(0x20050300), "qt  "))
	payload := uint64(len(frame)) + uint64(2*n)
	mdatHdr := movFields(uint32(8+payload), "mdat")
	if 8+payload > math.MaxUint32 {
		mdatHdr = movFields(uint32(1), "mdat", 16+payload)
	}
	// The moov size depends only on whether co64 is needed, not on the
	// offsets: size it with zero offsets first.
	co64 := false
	moovLen := len(l.moov(0, len(frame), co64))
	if uint64(len(ftyp)+moovLen+len(mdatHdr))+payload > math.MaxUint32 {
		co64 = true
		moovLen = len(l.moov(0, len(frame), co64))
	}
	frameOff := int64(len(ftyp) + moovLen + len(mdatHdr))
	moov := l.moov(frameOff, len(frame), co64)
	l.prefix = make([]byte, 0, int(frameOff)+len(frame))
	l.prefix = append(l.prefix, ftyp...)
	l.prefix = append(l.prefix, moov...)
	l.prefix = append(l.prefix, mdatHdr...)
	l.prefix = append(l.prefix, frame...)
	return l
}

// moov returns the movie atom for a JPEG frame of frameLen bytes at file
// offset frameOff, the audio samples following it.
func (l *movLayout) moov(frameOff int64, frameLen int, co64 bool) []byte {
	videoDur := max(l.durationMs, 1) // a sample cannot last 0
	mvhd := movAtom("mvhd", movFields(
		uint32(0),            // version, flags
		uint32(0), uint32(0), // creation, modification time
		uint32(movTimescale), videoDur,
		uint32(0x00010000), uint16(0x0100), // preferred rate, volume
		make([]byte, 10), movMatrix,
		uint32(0), uint32(0), uint32(0), uint32(0), uint32(0), uint32(0), // preview, poster, selection, current time
		uint32(3), // next track ID
	))
	return movAtom("moov", mvhd, l.videoTrak(videoDur, frameOff, frameLen, co64), l.audioTrak(frameOff+int64(frameLen), co64))
}

// videoTrak is the video track: one JPEG sample of frameLen bytes at
// frameOff, lasting dur.
func (l *movLayout) videoTrak(dur uint32, frameOff int64, frameLen int, co64 bool) []byte {
	jpegEntry := movAtom("jpeg", movFields(
		make([]byte, 6), uint16(1), // reserved, data reference index
		uint16(0), uint16(0), uint32(0), // version, revision, vendor
		uint32(0), uint32(0x200), // temporal, spatial quality
		uint16(movWidth), uint16(movHeight),
		uint32(72<<16), uint32(72<<16), // resolution
		uint32(0), uint16(1), // data size, frame count
		movPascal("Photo - JPEG", 32),
		uint16(24), uint16(0xFFFF), // depth, no colour table
	))
	return movTrack{
		id: 1, dur: dur, width: movWidth, height: movHeight,
		timescale: movTimescale, mediaDur: dur, handler: "vide", name: "VideoHandler",
		header: movAtom("vmhd", movFields(uint32(1), uint16(0x40), uint16(0x8000), uint16(0x8000), uint16(0x8000))),
		stbl: movStbl(jpegEntry,
			movFields(uint32(0), uint32(1), uint32(1), dur),
			movFields(uint32(0), uint32(1), uint32(1), uint32(1), uint32(1)),
			movFields(uint32(0), uint32(0), uint32(1), uint32(frameLen)),
			movChunkOffsets([]int64{frameOff}, co64)),
	}.atom()
}

// audioTrak is the audio track: 16-bit little-endian mono PCM from
// audioOff, one sample per frame, in chunks of l.chunkLen samples.
func (l *movLayout) audioTrak(audioOff int64, co64 bool) []byte {
	sowtEntry := movAtom("sowt", movFields(
		make([]byte, 6), uint16(1), // reserved, data reference index
		uint16(0), uint16(0), uint32(0), // version 0, revision, vendor
		uint16(1), uint16(16), // channels, sample size
		uint16(0), uint16(0), // compression ID, packet size
		uint32(l.sr)<<16, // sample rate, 16.16
	))
	var stts, stsc []byte
	if l.samples == 0 {
		stts = movFields(uint32(0), uint32(0))
		stsc = movFields(uint32(0), uint32(0))
	} else {
		stts = movFields(uint32(0), uint32(1), uint32(l.samples), uint32(1))
		last := l.samples - (l.chunks-1)*l.chunkLen
		switch {
		case last == l.chunkLen || l.chunks == 1:
			stsc = movFields(uint32(0), uint32(1), uint32(1), uint32(min(l.chunkLen, l.samples)), uint32(1))
		default:
			stsc = movFields(uint32(0), uint32(2),
				uint32(1), uint32(l.chunkLen), uint32(1),
				uint32(l.chunks), uint32(last), uint32(1))
		}
	}
	offs := make([]int64, l.chunks)
	for c := range offs {
		offs[c] = audioOff + 2*int64(c)*l.chunkLen
	}
	return movTrack{
		id: 2, dur: l.durationMs, volume: 0x0100,
		timescale: uint32(l.sr), mediaDur: uint32(l.samples), handler: "soun", name: "SoundHandler",
		header: movAtom("smhd", movFields(uint32(0), uint16(0), uint16(0))),
		stbl:   movStbl(sowtEntry, stts, stsc, movFields(uint32(0), uint32(2), uint32(l.samples)), movChunkOffsets(offs, co64)),
	}.atom()
}

// movTrack is what differs between the two tracks of a movie.
type movTrack struct {
	id, dur             uint32 // dur in the movie timescale
	volume              uint16
	width, height       uint32
	timescale, mediaDur uint32
	handler, name       string // media handler subtype and name
	header, stbl        []byte // the media header atom (vmhd, smhd); the sample table
}

// atom returns the trak atom: header, an edit list spanning the track, and
// the media with its data reference to this file.
func (t movTrack) atom() []byte {
	hdlr := func(class, sub, name string) []byte {
		return movAtom("hdlr", movFields(uint32(0), class, sub, uint32(0), uint32(0), uint32(0), movPascal(name, 0)))
	}
	return movAtom("trak",
		movAtom("tkhd", movFields(
			uint32(0x3), // version 0, flags: enabled, in movie
			uint32(0), uint32(0), t.id, uint32(0), t.dur,
			make([]byte, 8), uint16(0), uint16(0), t.volume, uint16(0),
			movMatrix, t.width<<16, t.height<<16,
		)),
		movAtom("edts", movAtom("elst", movFields(uint32(0), uint32(1), t.dur, uint32(0), uint32(0x00010000)))),
		movAtom("mdia",
			movAtom("mdhd", movFields(uint32(0), uint32(0), uint32(0), t.timescale, t.mediaDur, uint16(0), uint16(0))),
			hdlr("mhlr", t.handler, t.name),
			movAtom("minf",
				t.header,
				hdlr("dhlr", "alis", "DataHandler"),
				movAtom("dinf", movAtom("dref", movFields(uint32(0), uint32(1)), movAtom("alis", movFields(uint32(1))))),
				t.stbl,
			),
		),
	)
}

// movStbl returns a sample table of one sample description.
func movStbl(entry, stts, stsc, stsz, chunkOffsets []byte) []byte {
	return movAtom("stbl",
		movAtom("stsd", movFields(uint32(0), uint32(1)), entry),
		movAtom("stts", stts),
		movAtom("stsc", stsc),
		movAtom("stsz", stsz),
		chunkOffsets,
	)
}

// movChunkOffsets returns the chunk offset atom: co64 when the file needs
// 64-bit offsets, stco otherwise.
func movChunkOffsets(offs []int64, co64 bool) []byte {
	b := movFields(uint32(0), uint32(len(offs)))
	for _, o := range offs {
		if co64 {
			b = binary.BigEndian.AppendUint64(b, uint64(o))
		} else {
			b = binary.BigEndian.AppendUint32(b, uint32(o))
		}
	}
	if co64 {
		return movAtom("co64", b)
	}
	return movAtom("stco", b)
}

// NewMOVReader returns a playable QuickTime movie of t as an io.ReadSeeker:
// a colour-bars frame lasting the whole movie and the WAV's audio, at
// t.SampleRate clamped to 65535 Hz. Only the header atoms and the JPEG are
// kept in memory; the samples are synthesised as NewWAVReader's are. Not safe
// for concurrent use.
func NewMOVReader(t Track) io.ReadSeeker {
	l := movBuild(t)
	return newSynthReader(l.prefix, newMixer(t, l.sr, l.samples))
}
