package audio

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"image/jpeg"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// movTestAtom is an atom found by movWalk.
type movTestAtom struct {
	path    string // e.g. "moov/trak/mdia/mdhd"
	offset  int64  // of the atom header in the file
	size    int64  // whole atom
	payload []byte // nil when the atom extends past the bytes given
}

var movContainers = map[string]bool{"moov": true, "trak": true, "mdia": true, "minf": true, "dinf": true, "stbl": true, "edts": true}

// movWalk lists the atoms of b (the first bytes of a file starting at base),
// descending into containers; an atom that extends past b (the mdat, when
// only the head of a file is given) is listed without payload.
func movWalk(t *testing.T, b []byte, base int64, parent string) []movTestAtom {
	t.Helper()
	var out []movTestAtom
	for off := 0; off < len(b); {
		require.GreaterOrEqual(t, len(b)-off, 8, "atom header at %d", base+int64(off))
		size := int64(binary.BigEndian.Uint32(b[off:]))
		typ := string(b[off+4 : off+8])
		hdr := 8
		if size == 1 {
			require.GreaterOrEqual(t, len(b)-off, 16)
			size = int64(binary.BigEndian.Uint64(b[off+8:]))
			hdr = 16
		}
		require.GreaterOrEqual(t, size, int64(hdr), "%s size", typ)
		a := movTestAtom{path: parent + typ, offset: base + int64(off), size: size}
		if int64(off)+size <= int64(len(b)) {
			a.payload = b[off+hdr : off+int(size)]
		}
		out = append(out, a)
		if movContainers[typ] {
			require.NotNil(t, a.payload, "container %s is complete", typ)
			out = append(out, movWalk(t, a.payload, a.offset+int64(hdr), a.path+"/")...)
		}
		if a.payload == nil {
			break
		}
		off += int(size)
	}
	return out
}

// movFind returns the payloads of the atoms at path, in file order.
func movFind(atoms []movTestAtom, path string) [][]byte {
	var out [][]byte
	for _, a := range atoms {
		if a.path == path {
			out = append(out, a.payload)
		}
	}
	return out
}

// movMovie is what the tests read back from a movie's atoms.
type movMovie struct {
	atoms        []movTestAtom
	movieScale   uint32
	movieDur     uint32
	handlers     []string
	mediaScales  []uint32
	mediaDurs    []uint32
	chunkOffsets [][]int64
	chunkSamples [][]int64 // samples in each chunk
	sampleSizes  [][]int64 // constant size, or one per sample
	stsd         [][]byte
}

func movRead(t *testing.T, head []byte) movMovie {
	t.Helper()
	be := binary.BigEndian
	m := movMovie{atoms: movWalk(t, head, 0, "")}
	mvhd := movFind(m.atoms, "moov/mvhd")
	require.Len(t, mvhd, 1)
	m.movieScale, m.movieDur = be.Uint32(mvhd[0][12:]), be.Uint32(mvhd[0][16:])
	for _, h := range movFind(m.atoms, "moov/trak/mdia/hdlr") {
		m.handlers = append(m.handlers, string(h[4:8])+"/"+string(h[8:12]))
	}
	for _, h := range movFind(m.atoms, "moov/trak/mdia/mdhd") {
		m.mediaScales = append(m.mediaScales, be.Uint32(h[12:]))
		m.mediaDurs = append(m.mediaDurs, be.Uint32(h[16:]))
	}
	stcos := movFind(m.atoms, "moov/trak/mdia/minf/stbl/stco")
	co64s := movFind(m.atoms, "moov/trak/mdia/minf/stbl/co64")
	for i, stsc := range movFind(m.atoms, "moov/trak/mdia/minf/stbl/stsc") {
		var offs []int64
		if len(stcos) > 0 {
			p := stcos[i]
			for j := range int(be.Uint32(p[4:])) {
				offs = append(offs, int64(be.Uint32(p[8+4*j:])))
			}
		} else {
			p := co64s[i]
			for j := range int(be.Uint32(p[4:])) {
				offs = append(offs, int64(be.Uint64(p[8+8*j:])))
			}
		}
		m.chunkOffsets = append(m.chunkOffsets, offs)
		// Expand the sample-to-chunk table.
		per := make([]int64, len(offs))
		n := int(be.Uint32(stsc[4:]))
		for e := range n {
			first := int(be.Uint32(stsc[8+12*e:]))
			spc := int64(be.Uint32(stsc[12+12*e:]))
			last := len(offs)
			if e+1 < n {
				last = int(be.Uint32(stsc[8+12*(e+1):])) - 1
			}
			for c := first - 1; c < last; c++ {
				per[c] = spc
			}
		}
		m.chunkSamples = append(m.chunkSamples, per)
	}
	for _, stsz := range movFind(m.atoms, "moov/trak/mdia/minf/stbl/stsz") {
		size, count := int64(be.Uint32(stsz[4:])), int(be.Uint32(stsz[8:]))
		var sizes []int64
		if size != 0 {
			sizes = []int64{size, int64(count)}
		} else {
			for j := range count {
				sizes = append(sizes, int64(be.Uint32(stsz[12+4*j:])))
			}
		}
		m.sampleSizes = append(m.sampleSizes, sizes)
	}
	for _, stsd := range movFind(m.atoms, "moov/trak/mdia/minf/stbl/stsd") {
		m.stsd = append(m.stsd, stsd[8:]) // the single sample entry
	}
	return m
}

// movHead reads the header bytes (everything before the audio samples) of
// the movie of tr.
func movHead(t *testing.T, tr Track) []byte {
	t.Helper()
	l := movBuild(tr)
	head := make([]byte, len(l.prefix))
	_, err := io.ReadFull(NewMOVReader(tr), head)
	require.NoError(t, err)
	return head
}

// movSize is the length of the movie of tr, as its reader gives it.
func movSize(t *testing.T, tr Track) int64 {
	t.Helper()
	size, err := NewMOVReader(tr).Seek(0, io.SeekEnd)
	require.NoError(t, err)
	return size
}

func TestMOVStructure(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		track      Track
		wantRate   uint32
		wantN      int64
		wantChunks int
		wantCo64   bool
		readAll    bool
	}{
		{"ten seconds", wavLongTrack(22050, 10*time.Second), 22050, 220500, 10, false, true},
		{"partial chunk", synthTestTrack(), 22050, 264600, 12, false, true},
		{"odd duration 44100", Track{SampleRate: 44100, Duration: 2345 * time.Millisecond, Segments: synthTestTrack().Segments}, 44100, 103415, 3, false, true},
		{"under a second", Track{SampleRate: 8000, Duration: 300 * time.Millisecond, Segments: []Segment{{End: time.Second, Text: "hi"}}}, 8000, 2400, 1, false, true},
		{"empty", Track{SampleRate: 22050}, 22050, 0, 0, false, true},
		{"default rate", Track{Duration: 1500 * time.Millisecond}, 22050, 33075, 2, false, true},
		{"rate clamped", Track{SampleRate: 96000, Duration: time.Second}, 65535, 65535, 1, false, true},
		{"many chunks", Track{SampleRate: 8000, Duration: 5 * time.Hour}, 8000, 144000000, 16383, false, false},
		{"over 4 GiB", Track{SampleRate: 44100, Duration: 20 * time.Hour}, 44100, synthMaxSamples, 16384, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			size := movSize(t, tc.track)
			head := movHead(t, tc.track)
			m := movRead(t, head)

			// Top level: ftyp, moov, mdat up to the end of the file.
			var top []string
			for _, a := range m.atoms {
				if !bytes.Contains([]byte(a.path), []byte("/")) {
					top = append(top, a.path)
				}
			}
			require.Equal(t, []string{"ftyp", "moov", "mdat"}, top)
			assert.Equal(t, []byte("qt  "), movFind(m.atoms, "ftyp")[0][:4])
			mdat := m.atoms[len(m.atoms)-1]
			assert.Equal(t, size, mdat.offset+mdat.size, "mdat ends the file")
			assert.Equal(t, size, int64(len(head))+2*tc.wantN, "size")
			assert.Equal(t, tc.wantCo64, len(movFind(m.atoms, "moov/trak/mdia/minf/stbl/co64")) > 0, "co64")

			// Durations: the movie and the video in ms, the audio in samples.
			wantMs := uint32(math.Round(float64(tc.wantN) * 1000 / float64(tc.wantRate)))
			assert.Equal(t, uint32(1000), m.movieScale)
			assert.Equal(t, max(wantMs, 1), m.movieDur)
			assert.Equal(t, []string{"mhlr/vide", "mhlr/soun"}, m.handlers)
			assert.Equal(t, []uint32{1000, tc.wantRate}, m.mediaScales)
			assert.Equal(t, []uint32{max(wantMs, 1), uint32(tc.wantN)}, m.mediaDurs)
			for i, tkhd := range movFind(m.atoms, "moov/trak/tkhd") {
				assert.Equal(t, uint32(i+1), binary.BigEndian.Uint32(tkhd[12:]), "track ID")
				assert.LessOrEqual(t, binary.BigEndian.Uint32(tkhd[20:]), m.movieDur, "track duration")
			}

			// Sample descriptions.
			require.Len(t, m.stsd, 2)
			assert.Equal(t, "jpeg", string(m.stsd[0][4:8]))
			assert.Equal(t, uint16(movWidth), binary.BigEndian.Uint16(m.stsd[0][32:]))
			assert.Equal(t, uint16(movHeight), binary.BigEndian.Uint16(m.stsd[0][34:]))
			assert.Equal(t, "sowt", string(m.stsd[1][4:8]))
			assert.Equal(t, uint16(0), binary.BigEndian.Uint16(m.stsd[1][16:]), "sound description version")
			assert.Equal(t, uint16(1), binary.BigEndian.Uint16(m.stsd[1][24:]), "channels")
			assert.Equal(t, uint16(16), binary.BigEndian.Uint16(m.stsd[1][26:]), "bits")
			assert.Equal(t, tc.wantRate<<16, binary.BigEndian.Uint32(m.stsd[1][32:]), "rate")

			// Video: one JPEG frame right after the mdat header.
			require.Len(t, m.chunkOffsets[0], 1)
			require.Len(t, m.sampleSizes[0], 1)
			frameOff, frameLen := m.chunkOffsets[0][0], m.sampleSizes[0][0]
			assert.Equal(t, int64(len(head)), frameOff+frameLen, "the frame ends the header")
			cfg, err := jpeg.DecodeConfig(bytes.NewReader(head[frameOff : frameOff+frameLen]))
			require.NoError(t, err)
			assert.Equal(t, [2]int{movWidth, movHeight}, [2]int{cfg.Width, cfg.Height})

			// Audio: contiguous chunks of 2-byte samples up to the end.
			assert.Equal(t, []int64{2, tc.wantN}, m.sampleSizes[1])
			offs, per := m.chunkOffsets[1], m.chunkSamples[1]
			assert.Len(t, offs, tc.wantChunks)
			next, total := int64(len(head)), int64(0)
			for c := range offs {
				require.Equal(t, next, offs[c], "chunk %d offset", c)
				require.Positive(t, per[c], "chunk %d samples", c)
				next += 2 * per[c]
				total += per[c]
			}
			assert.Equal(t, tc.wantN, total, "samples in chunks")
			assert.Equal(t, size, next, "the last chunk ends the file")

			if tc.readAll {
				// The audio is the WAV's data, byte for byte.
				all, err := io.ReadAll(NewMOVReader(tc.track))
				require.NoError(t, err)
				require.Len(t, all, int(size))
				wavTrack := tc.track
				wavTrack.SampleRate = int(tc.wantRate)
				wav, err := io.ReadAll(NewWAVReader(wavTrack))
				require.NoError(t, err)
				assert.True(t, bytes.Equal(wav[wavHeaderSize:], all[len(head):]), "audio equals the WAV data")
			}
		})
	}
}

func TestMOVDeterminism(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		track Track
	}{
		{"two speakers", synthTestTrack()},
		{"44100 Hz", wavLongTrack(44100, 21*time.Second+500*time.Millisecond)},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, err := io.ReadAll(NewMOVReader(tc.track))
			require.NoError(t, err)
			b, err := io.ReadAll(NewMOVReader(tc.track))
			require.NoError(t, err)
			require.Len(t, a, int(movSize(t, tc.track)))
			assert.True(t, bytes.Equal(a, b), "two readers agree")
			wavCheckSeeks(t, func() io.ReadSeeker { return NewMOVReader(tc.track) }, a, uint64(100+i))
		})
	}
}

func TestMOVSizeSmall(t *testing.T) {
	t.Parallel()
	tr := wavLongTrack(22050, 10*time.Minute)
	size := movSize(t, tr)
	pcm := int64(2 * 22050 * 600)
	t.Logf("10-minute MOV at 22050 Hz: %d bytes (%d of PCM, %d of header and JPEG)", size, pcm, size-pcm)
	assert.Less(t, size-pcm, int64(32<<10), "header and frame stay small")
}

// movProbe is the part of ffprobe's JSON output the tests look at.
type movProbe struct {
	Streams []struct {
		CodecName  string `json:"codec_name"`
		SampleRate string `json:"sample_rate"`
		Channels   int    `json:"channels"`
	} `json:"streams"`
	Format struct {
		Duration string `json:"duration"`
	} `json:"format"`
}

// TestMediaTools checks the files with ffprobe and ffmpeg. One run of
// ffmpeg decodes every case's files (a start of ffmpeg or ffprobe loads
// about 200 libraries, 0.25 s of CPU, more than decoding one of these).
func TestMediaTools(t *testing.T) {
	t.Parallel()
	tools := wavRequireTools(t, "ffprobe", "ffmpeg")
	ffprobe, ffmpeg := tools[0], tools[1]
	tests := []struct {
		name  string
		track Track
	}{
		{"22050 Hz", Track{SampleRate: 22050, Duration: 12345 * time.Millisecond, Segments: synthTestTrack().Segments}},
		{"44100 Hz", wavLongTrack(44100, 7500*time.Millisecond)},
		{"8000 Hz short", Track{SampleRate: 8000, Duration: 900 * time.Millisecond, Segments: []Segment{{Start: 100 * time.Millisecond, End: 800 * time.Millisecond, Text: "ok"}}}},
	}
	write := func(path string, r io.Reader) {
		f, err := os.Create(path)
		require.NoError(t, err)
		_, err = io.Copy(f, r)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	// Each case's dir holds its WAV and MOV, and what ffmpeg makes of the
	// MOV: its audio as raw PCM and its first video frame as RGB.
	dirs := make([]string, len(tests))
	args := []string{"-nostdin", "-v", "error"}
	var outputs []string
	for i, tc := range tests {
		dirs[i] = t.TempDir()
		wav, mov := filepath.Join(dirs[i], "dub.wav"), filepath.Join(dirs[i], "dub.mov")
		write(wav, NewWAVReader(tc.track))
		write(mov, NewMOVReader(tc.track))
		args = append(args, "-i", wav, "-i", mov)
		w, m := strconv.Itoa(2*i), strconv.Itoa(2*i+1)
		outputs = append(outputs,
			// Decode everything.
			"-map", w, "-f", "null", "-",
			"-map", m, "-f", "null", "-",
			"-map", m+":a", "-f", "s16le", filepath.Join(dirs[i], "pcm"),
			"-map", m+":v", "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", filepath.Join(dirs[i], "rgb"))
	}
	wavRun(t, ffmpeg, append(args, outputs...)...)

	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wavPath, movPath := filepath.Join(dirs[i], "dub.wav"), filepath.Join(dirs[i], "dub.mov")
			rate := strconv.Itoa(tc.track.SampleRate)

			for _, f := range []struct {
				path   string
				codecs []string
			}{
				{wavPath, []string{"pcm_s16le"}},
				{movPath, []string{"mjpeg", "pcm_s16le"}},
			} {
				out := wavRun(t, ffprobe, "-v", "error", "-show_entries",
					"format=duration:stream=codec_name,sample_rate,channels", "-of", "json", f.path)
				var p movProbe
				require.NoError(t, json.Unmarshal(out, &p), "%s", out)
				dur, err := strconv.ParseFloat(p.Format.Duration, 64)
				require.NoError(t, err, "%s", out)
				assert.InDelta(t, tc.track.Duration.Seconds(), dur, 0.050, "%s duration", f.path)
				var codecs []string
				for _, s := range p.Streams {
					codecs = append(codecs, s.CodecName)
					if s.CodecName == "pcm_s16le" {
						assert.Equal(t, rate, s.SampleRate)
						assert.Equal(t, 1, s.Channels)
					}
				}
				assert.Equal(t, f.codecs, codecs, f.path)
			}

			// ffmpeg finds the same samples in the MOV as in the WAV.
			wav, err := os.ReadFile(wavPath)
			require.NoError(t, err)
			pcm, err := os.ReadFile(filepath.Join(dirs[i], "pcm"))
			require.NoError(t, err)
			assert.True(t, bytes.Equal(wav[wavHeaderSize:], pcm), "MOV audio decodes to the WAV data (%d vs %d bytes)", len(pcm), len(wav)-wavHeaderSize)

			// The video frame decodes to colour bars.
			rgb, err := os.ReadFile(filepath.Join(dirs[i], "rgb"))
			require.NoError(t, err)
			require.Len(t, rgb, movWidth*movHeight*3)
			px := func(x, y int) []byte { return rgb[3*(y*movWidth+x) : 3*(y*movWidth+x)+3] }
			assert.InDeltaSlice(t, []float64{191, 191, 191}, movFloats(px(20, 40)), 12, "white bar")
			assert.InDeltaSlice(t, []float64{0, 0, 191}, movFloats(px(movWidth-20, 40)), 12, "blue bar")
		})
	}
}

func movFloats(b []byte) []float64 {
	out := make([]float64, len(b))
	for i, v := range b {
		out[i] = float64(v)
	}
	return out
}
