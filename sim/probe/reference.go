package probe

// The pitch tracker of reference voice samples works on a bounded prefix of the audio: the samples are
// mixed to mono, low-passed at 1 kHz (two biquads: a 4th-order Butterworth)
// and decimated by an integer factor to an analysis rate of at most
// 11025 Hz, keeping at most the first 15 s. Frames of 40 ms every 20 ms are
// then gated by level (frames 30 dB or more below the loud frames are
// silence) and by periodicity (the normalised cross-correlation must reach
// 0.6 at some lag of 60 to 400 Hz); the median of the voiced frames' f0 is
// the speaker's pitch.

import (
	"encoding/binary"
	"math"
	"slices"
	"time"
)

// ReferenceInfo is what is learnt from a reference voice sample.
type ReferenceInfo struct {
	Format   string        // a Format* constant, "" when unrecognised
	PitchHz  float64       // median f0 of the voiced frames; 0 when it could not be measured
	Duration time.Duration // 0 when unknown
}

// The constants of the pitch tracker described above.
const (
	referenceMinPitchHz     = 60.0 // a measured PitchHz is 0 or within [min, max]
	referenceMaxPitchHz     = 400.0
	referenceMaxAnalysisSec = 15
	referenceMaxRate        = 11025 // the highest analysis rate

	// Sample rates outside [referenceMinInputRate, referenceMaxInputRate]
	// give format and duration only.
	referenceMinInputRate = 4000
	referenceMaxInputRate = 1000000
	referenceLowpassHz    = 1000.0

	// A frame is correlated with itself shifted by up to
	// 1/referenceMinPitchHz, so it reads that much further.
	referenceFrameSec = 0.040
	referenceHopSec   = 0.020

	// A frame whose RMS is below referenceSilenceRatio (-30 dB) of the loud
	// level (the 95th percentile of the frames' RMS) is silence; below
	// referenceMinLevel (about -80 dBFS) the whole sample is.
	referenceSilenceRatio   = 0.0316
	referenceLoudPercentile = 0.95
	referenceMinLevel       = 1e-4

	// referenceVoicedNCCF is the normalised cross-correlation a frame must
	// reach at its best lag to count as voiced.
	referenceVoicedNCCF = 0.6

	// referenceOctaveRatio: the period is the shortest lag whose local
	// correlation peak is within this ratio of the best one (guards
	// against picking a multiple of the period).
	referenceOctaveRatio = 0.9

	// PitchHz is 0 unless at least referenceMinVoiced frames, and
	// referenceMinVoicedShare of the non-silent ones, are voiced (white noise
	// and unvoiced sounds give none or a handful).
	referenceMinVoiced      = 5
	referenceMinVoicedShare = 0.1

	referenceMaxChannels = 1024 // the most channels mixed to mono
)

// referenceGUIDTail is the common tail of the KSDATAFORMAT_SUBTYPE GUIDs
// (the first two bytes are the format code).
const referenceGUIDTail = "\x00\x00\x00\x00\x10\x00\x80\x00\x00\xAA\x00\x38\x9B\x71"

// AnalyzeReference measures a reference sample from its first bytes (a
// prefix that may end anywhere, even inside the data chunk: what is there is
// analysed). Format is DetectFormat(head). For WAV (integer PCM of 8 to 32
// bits or float, plain or WAVE_FORMAT_EXTENSIBLE, up to 1024 channels mixed to
// mono) it also gives Duration, the declared data size over the byte rate (0
// when unset, as in streamed files), and PitchHz, measured on at most the
// first 15 s of the samples present.
//
// It never panics. Its allocations follow the audio analysed, not the sizes
// the header declares nor the length of head: at most about 700 KB. Its CPU
// time is linear in the bytes decoded plus about 750 frames of correlation.
func AnalyzeReference(head []byte) ReferenceInfo {
	info := ReferenceInfo{Format: DetectFormat(head)}
	if info.Format != FormatWAV {
		return info
	}
	w, d, ok := referenceParseWAV(head)
	info.Duration = d
	if ok && w.decodable {
		info.PitchHz = referencePitch(referenceDecode(w))
	}
	return info
}

// referenceParseWAV reads the fmt and data chunks of head: the format, the
// whole frames of the data chunk present in head, and the duration its
// declared size gives (0 when unset). ok is false without a fmt chunk.
func referenceParseWAV(head []byte) (w referenceWAV, d time.Duration, ok bool) {
	c, err := wavWalk(&probeReader{mem: head, size: int64(len(head))})
	if err != nil || c.fmt == nil {
		return w, 0, false
	}
	w = referenceParseFmt(c.fmt, int64(c.fmtSize))
	// A data size of 0 or the streaming marker is no size.
	known := c.dataSize != 0 && c.dataSize != wavStreamingSize
	if known {
		d, _ = probeRatioDuration(c.dataSize, w.byteRate)
	}
	if w.decodable && c.dataOff != 0 {
		end := int64(len(head)) // streamed: the samples run to the end of the file
		if known {
			end = min(c.dataOff+int64(c.dataSize), end)
		}
		n := (end - c.dataOff) / int64(w.frameBytes) * int64(w.frameBytes)
		w.data = head[c.dataOff : c.dataOff+n : c.dataOff+n]
	}
	return w, d, true
}

// referenceWAV is what AnalyzeReference learns from a WAV header.
type referenceWAV struct {
	tag        int // wavFormatPCM or wavFormatFloat after resolving EXTENSIBLE
	channels   int
	sampleRate int
	bits       int // container bits per sample
	frameBytes int
	byteRate   uint64
	decodable  bool   // tag, bits, channels and sample rate are supported
	data       []byte // the bytes of the data chunk present in head, whole frames only
}

// referenceParseFmt decodes a fmt chunk body (at least 16 bytes present;
// declared is its declared size).
func referenceParseFmt(f []byte, declared int64) (w referenceWAV) {
	le := binary.LittleEndian
	tag := int(le.Uint16(f[0:2]))
	w.channels = int(le.Uint16(f[2:4]))
	w.sampleRate = int(le.Uint32(f[4:8]))
	w.bits = int(le.Uint16(f[14:16]))
	if tag == wavFormatExtensible {
		tag = 0
		if declared >= 40 && len(f) >= 40 && le.Uint16(f[16:18]) >= 22 && string(f[26:40]) == referenceGUIDTail {
			tag = int(le.Uint16(f[24:26]))
		}
	}
	w.tag = tag
	_, supported := wavCodecs[[2]uint16{uint16(tag), uint16(w.bits)}] // integer PCM of 8 to 32 bits, float of 32 or 64
	if supported && w.channels >= 1 && w.channels <= referenceMaxChannels && w.sampleRate > 0 {
		w.frameBytes = w.channels * w.bits / 8
		w.byteRate = uint64(w.sampleRate) * uint64(w.frameBytes)
		w.decodable = w.sampleRate >= referenceMinInputRate && w.sampleRate <= referenceMaxInputRate
		return w
	}
	// Unsupported encoding: the duration still follows the declared rate.
	w.byteRate = wavByteRate(f)
	return w
}

// referenceBiquad is a transposed direct form II biquad section.
type referenceBiquad struct {
	b0, b1, b2, a1, a2 float64
	z1, z2             float64
}

// referenceLowpass returns the RBJ low-pass section at fc Hz with quality q.
func referenceLowpass(fc, sr, q float64) referenceBiquad {
	w0 := 2 * math.Pi * fc / sr
	sin, cos := math.Sincos(w0)
	alpha := sin / (2 * q)
	a0 := 1 + alpha
	return referenceBiquad{
		b0: (1 - cos) / 2 / a0,
		b1: (1 - cos) / a0,
		b2: (1 - cos) / 2 / a0,
		a1: -2 * cos / a0,
		a2: (1 - alpha) / a0,
	}
}

func (f *referenceBiquad) step(x float64) float64 {
	y := f.b0*x + f.z1
	f.z1 = f.b1*x - f.a1*y + f.z2
	f.z2 = f.b2*x - f.a2*y
	return y
}

// referenceSignal is mono audio at the analysis rate.
type referenceSignal struct {
	x  []float32
	sr float64
}

// referenceDecode mixes w.data to mono, low-passes it and decimates it to
// the analysis rate, keeping at most referenceMaxAnalysisSec seconds.
func referenceDecode(w referenceWAV) referenceSignal {
	decim := (w.sampleRate + referenceMaxRate - 1) / referenceMaxRate
	sr := float64(w.sampleRate) / float64(decim)
	frames := len(w.data) / w.frameBytes
	outN := min(frames/decim, int(referenceMaxAnalysisSec*sr))
	if outN <= 0 {
		return referenceSignal{sr: sr}
	}
	out := make([]float32, outN)
	// Butterworth 4th order as two biquads.
	lp1 := referenceLowpass(referenceLowpassHz, float64(w.sampleRate), 0.54119610)
	lp2 := referenceLowpass(referenceLowpassHz, float64(w.sampleRate), 1.3065630)
	bps := w.bits / 8
	inv := 1 / float64(w.channels)
	le := binary.LittleEndian
	p := 0
	for i := range outN * decim {
		sum := 0.0
		for range w.channels {
			b := w.data[p : p+bps]
			p += bps
			var v float64
			switch {
			case w.tag == wavFormatFloat && bps == 4:
				v = float64(math.Float32frombits(le.Uint32(b)))
			case w.tag == wavFormatFloat:
				v = math.Float64frombits(le.Uint64(b))
			case bps == 1:
				v = (float64(b[0]) - 128) / 128
			case bps == 2:
				v = float64(int16(le.Uint16(b))) / (1 << 15)
			case bps == 3:
				v = float64(int32(uint32(b[0])<<8|uint32(b[1])<<16|uint32(b[2])<<24)>>8) / (1 << 23)
			default:
				v = float64(int32(le.Uint32(b))) / (1 << 31)
			}
			if math.IsNaN(v) {
				v = 0
			}
			sum += max(-1e3, min(1e3, v)) // Inf and absurd floats are clamped
		}
		y := lp2.step(lp1.step(sum * inv))
		if (i+1)%decim == 0 {
			out[i/decim] = float32(y)
		}
	}
	return referenceSignal{x: out, sr: sr}
}

// referencePitch returns the median f0 of the voiced frames of s, or 0.
func referencePitch(s referenceSignal) float64 {
	win := int(math.Round(referenceFrameSec * s.sr))
	hop := int(math.Round(referenceHopSec * s.sr))
	minLag := int(math.Floor(s.sr / referenceMaxPitchHz))
	maxLag := int(math.Ceil(s.sr / referenceMinPitchHz))
	span := win + maxLag + 1 // samples a frame reads
	if minLag < 2 || hop < 1 || len(s.x) < span {
		return 0
	}
	nFrames := (len(s.x)-span)/hop + 1

	// Pass 1: the level of each frame.
	rms := make([]float64, nFrames)
	for k := range rms {
		seg := s.x[k*hop : k*hop+win]
		mean := 0.0
		for _, v := range seg {
			mean += float64(v)
		}
		mean /= float64(win)
		e := 0.0
		for _, v := range seg {
			d := float64(v) - mean
			e += d * d
		}
		rms[k] = math.Sqrt(e / float64(win))
	}
	sorted := slices.Clone(rms)
	slices.Sort(sorted)
	loud := sorted[min(len(sorted)-1, int(referenceLoudPercentile*float64(len(sorted))))]
	if !(loud >= referenceMinLevel) {
		return 0
	}
	gate := referenceSilenceRatio * loud

	// Pass 2: the period of each non-silent frame.
	buf := make([]float64, span)
	sq := make([]float64, span+1) // prefix sums of squares
	r := make([]float64, maxLag+2)
	f0s := sorted[:0] // reuse: rms values are no longer needed sorted
	active := 0
	for k := range nFrames {
		if rms[k] < gate {
			continue
		}
		active++
		if f0 := referenceFramePitch(s.x[k*hop:k*hop+span], win, minLag, maxLag, s.sr, buf, sq, r); f0 > 0 {
			f0s = append(f0s, f0)
		}
	}
	if len(f0s) < referenceMinVoiced || float64(len(f0s)) < referenceMinVoicedShare*float64(active) {
		return 0
	}
	slices.Sort(f0s)
	m := len(f0s) / 2
	if len(f0s)%2 == 1 {
		return f0s[m]
	}
	return (f0s[m-1] + f0s[m]) / 2
}

// referenceFramePitch estimates the f0 of one frame (x holds win+maxLag+1
// samples) by normalised cross-correlation, or returns 0 when the frame has
// no clear periodicity in [referenceMinPitchHz, referenceMaxPitchHz].
func referenceFramePitch(x []float32, win, minLag, maxLag int, sr float64, buf, sq, r []float64) float64 {
	mean := 0.0
	for _, v := range x {
		mean += float64(v)
	}
	mean /= float64(len(x))
	sq[0] = 0
	for i, v := range x {
		d := float64(v) - mean
		buf[i] = d
		sq[i+1] = sq[i] + d*d
	}
	e0 := sq[win]
	if !(e0 > 0) {
		return 0
	}
	best, bestLag := -1.0, 0
	for lag := minLag - 1; lag <= maxLag+1; lag++ {
		c := 0.0
		a, b := buf[:win], buf[lag:lag+win]
		for i := range a {
			c += a[i] * b[i]
		}
		e1 := sq[lag+win] - sq[lag]
		r[lag] = 0
		if e1 > 0 {
			r[lag] = c / math.Sqrt(e0*e1)
		}
		if lag >= minLag && lag <= maxLag && r[lag] > best {
			best, bestLag = r[lag], lag
		}
	}
	if best < referenceVoicedNCCF {
		return 0
	}
	lag := bestLag
	for l := minLag; l < bestLag; l++ {
		if r[l] >= referenceOctaveRatio*best && r[l] >= r[l-1] && r[l] >= r[l+1] {
			lag = l
			break
		}
	}
	// Parabolic interpolation around the peak.
	d := 0.0
	if den := r[lag-1] - 2*r[lag] + r[lag+1]; den < 0 {
		d = max(-0.5, min(0.5, 0.5*(r[lag-1]-r[lag+1])/den))
	}
	f0 := sr / (float64(lag) + d)
	if f0 < referenceMinPitchHz || f0 > referenceMaxPitchHz {
		return 0
	}
	return f0
}
