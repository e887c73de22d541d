package media

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/probe"
)

// Messages of Inspect, shown to API users inside the refusal or error of a
// resource (sim.MsgVideoUnreadable, an artifact's errorMessage).
const (
	MsgUnknownFormat = "not a supported media file (WAV, MP4/MOV, WebM/Matroska, MP3, FLAC)"
	// MsgCannotRead is all a creation is told when a probe fails: not why
	// (fidelity HF2); the server log has the reason. An artifact's download
	// says the same (sim.MsgDownloadUnreadable).
	MsgCannotRead = "the media could not be read (it is not reachable, not answered, or not a supported media file: WAV, MP4/MOV, WebM/Matroska, MP3, FLAC)"
	MsgNoDuration = "the media header has no duration"
)

// Messages of Download, shown to API users as an artifact's errorMessage:
// templates of (URL, reason) and the reasons.
const (
	MsgDownloadFailed  = "download of %s failed: %s"
	MsgDownloadRefused = "download of %s refused: %s"

	reasonStatus    = "HTTP %d %s" // code and standard text ("HTTP 404 Not Found")
	reasonTooLarge  = "the file is larger than the limit of %d bytes"
	reasonStalled   = "no data received for %s"
	reasonTruncated = "the connection closed after %d of %d bytes"
	reasonStore     = "storing the file: %v"
	reasonScheme    = "only http and https URLs are fetched"
	reasonHost      = "%s is not a host dubsim may contact (loopback, or allowed with --fetch-hosts)"
	reasonNoHost    = "the URL has no host"
	reasonBadURL    = "not a valid URL"
	reasonLimit     = "negative size limit %d"
)

// downloadStall is how long a download may go without receiving data
// (response headers or body bytes) before it fails.
const downloadStall = 30 * time.Second

// ErrTooLarge means the media to download has more bytes than the limit.
var ErrTooLarge = errors.New("media: larger than the limit")

// errStalled is the cause of a download cancelled for want of data.
var errStalled = errors.New("media: download stalled")

// userError is an error whose message is meant for API users; it unwraps
// to its cause, so errors.Is and errors.As see through it.
type userError struct {
	msg   string
	cause error
}

func (e *userError) Error() string { return e.msg }
func (e *userError) Unwrap() error { return e.cause }

// MayFetchURL reports whether dubsim may contact rawURL: an http or https
// URL whose host is loopback or allowed by AllowHosts.
func (r *Resolver) MayFetchURL(rawURL string) bool { return r.checkFetch(rawURL) == "" }

// checkFetch returns why rawURL may not be fetched, or "".
func (r *Resolver) checkFetch(rawURL string) string {
	u, err := url.Parse(rawURL)
	switch {
	case err != nil:
		return reasonBadURL
	case u.Scheme != "http" && u.Scheme != "https":
		return reasonScheme
	case u.Hostname() == "":
		return reasonNoHost
	case !r.mayFetch(u.Hostname()):
		return fmt.Sprintf(reasonHost, u.Hostname())
	}
	return ""
}

// Download GETs rawURL and streams the body to w, returning the bytes
// written. It refuses URLs dubsim may not contact (see MayFetchURL), and
// redirects to them, saying why. A non-2xx status, a body of more than limit
// bytes (an error wrapping ErrTooLarge; w gets at most limit bytes), a body
// shorter than announced, no data for 30 s, the end of ctx or a failing w
// give an error whose message names the URL and the cause for API users,
// or with GenericErrors only the URL (fidelity HX3; the error still wraps the
// cause, which is logged). The default client's overall timeout, meant for
// probes, does not apply.
func (r *Resolver) Download(ctx context.Context, rawURL string, w io.Writer, limit int64) (int64, error) {
	if reason := r.checkFetch(rawURL); reason != "" {
		return 0, &userError{msg: fmt.Sprintf(MsgDownloadRefused, rawURL, reason)}
	}
	n, err := r.download(ctx, rawURL, w, limit)
	if err != nil && r.GenericErrors {
		if r.Log != nil {
			r.Log.Warn("artifact download failed", "url", rawURL, "err", err)
		}
		err = &userError{msg: fmt.Sprintf(sim.MsgDownloadUnreadable, rawURL), cause: err}
	}
	return n, err
}

func (r *Resolver) download(ctx context.Context, rawURL string, w io.Writer, limit int64) (int64, error) {
	fail := func(cause error, reason string, args ...any) error {
		return &userError{msg: fmt.Sprintf(MsgDownloadFailed, rawURL, fmt.Sprintf(reason, args...)), cause: cause}
	}
	if limit < 0 {
		return 0, fail(nil, reasonLimit, limit)
	}

	stall := r.stall
	if stall <= 0 {
		stall = downloadStall
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watchdog := time.AfterFunc(stall, func() { cancel(errStalled) })
	defer watchdog.Stop()
	// transportErr names what ended a request or a body read.
	transportErr := func(err error) error {
		if errors.Is(context.Cause(ctx), errStalled) {
			return fail(errStalled, reasonStalled, stall)
		}
		inner := err
		var ue *url.Error
		if errors.As(err, &ue) {
			inner = ue.Err // without the repeated method and URL
		}
		return fail(err, "%v", inner)
	}

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return 0, fail(err, reasonBadURL)
	}
	req.Header.Set("User-Agent", "dubsim (download)")
	client := r.client()
	if r.Client == nil {
		client.Timeout = 0
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, transportErr(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return 0, fail(nil, "%s", statusReason(resp.StatusCode))
	}
	if resp.ContentLength > limit {
		return 0, fail(ErrTooLarge, reasonTooLarge, limit)
	}

	watchdog.Reset(stall)
	body := &stallReader{r: resp.Body, watchdog: watchdog, stall: stall}
	sink := &errWriter{w: w}
	n, err := io.Copy(sink, io.LimitReader(body, limit))
	if err == nil && n == limit {
		// One byte more tells whether the limit is crossed; w never gets
		// more than limit bytes.
		var one [1]byte
		switch k, rerr := io.ReadFull(body, one[:]); {
		case k > 0:
			return n, fail(ErrTooLarge, reasonTooLarge, limit)
		case !errors.Is(rerr, io.EOF):
			err = rerr
		}
	}
	switch {
	case sink.err != nil:
		return n, fail(sink.err, reasonStore, sink.err)
	case errors.Is(err, io.ErrUnexpectedEOF) && resp.ContentLength > 0:
		return n, fail(err, reasonTruncated, n, resp.ContentLength)
	case err != nil:
		return n, transportErr(err)
	}
	return n, nil
}

// statusReason is reasonStatus for code, without the text when the code has
// none.
func statusReason(code int) string {
	return strings.TrimSuffix(fmt.Sprintf(reasonStatus, code, http.StatusText(code)), " ")
}

// stallReader pushes the watchdog back on every read that returns data.
type stallReader struct {
	r        io.Reader
	watchdog *time.Timer
	stall    time.Duration
}

func (s *stallReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 {
		s.watchdog.Reset(s.stall)
	}
	return n, err
}

// errWriter records the error of its writer, so a failing destination is
// told apart from a failing source.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	n, err := e.w.Write(p)
	if err != nil {
		e.err = err
	}
	return n, err
}

// Inspect reads the container header of the media in ra (size bytes, or
// < 0 when unknown): see probe.Probe. Its errors wrapping
// probe.ErrUnknownFormat and probe.ErrNoDuration have the messages
// MsgUnknownFormat and MsgNoDuration; a recognised format is returned even
// then.
func Inspect(ra io.ReaderAt, size int64) (format string, duration time.Duration, mf sim.MediaFormat, err error) {
	mi, err := probe.Probe(ra, size)
	switch {
	case errors.Is(err, probe.ErrUnknownFormat):
		return "", 0, mf, &userError{msg: MsgUnknownFormat, cause: err}
	case errors.Is(err, probe.ErrNoDuration):
		return mi.Format, 0, mf, &userError{msg: MsgNoDuration, cause: err}
	case err != nil:
		return mi.Format, 0, mf, err
	}
	return mi.Format, mi.Duration, mediaFormat(mi), nil
}

func mediaFormat(mi probe.MediaInfo) sim.MediaFormat {
	f := sim.MediaFormat{VideoCodec: mi.VideoCodec, Width: mi.Width, Height: mi.Height,
		AudioCodec: mi.AudioCodec, SampleRate: mi.SampleRate, Channels: mi.Channels}
	if mi.FrameRate > 0 && mi.FrameRate < 1e6 {
		f.FrameRate = int(math.Round(mi.FrameRate * 1000))
	}
	return f
}
