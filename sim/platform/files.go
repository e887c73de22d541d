package platform

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/audio"
	"github.com/dubsim/dubsim/sim/internal/httpx"
	"github.com/go-chi/chi/v5"
)

// Output file names and the sample rate of the dubbed audio track.
const (
	fileVideo        = "dubbed_video.mov"
	fileAudio        = "dubbed_audio.wav"
	outputSampleRate = 22050
)

// signedParam carries a download URL's signature, as the provider's links do.
const signedParam = "signed"

// fileURL is the download URL of an output of p's current generation (a
// re-translation changes it: no stale files), signed because a project id
// follows the seed.
func (a *API) fileURL(base string, p sim.Project, name string) string {
	return fmt.Sprintf("%s/files/projects/%s/%d/%s?%s=%s", base, p.ID, p.OutputGen, name, signedParam, a.svc.OutputSignature(p))
}

// handleOutputFile serves GET/HEAD /files/projects/{project_id}/{gen}/{file}?signed=...
// A bad signature answers the 404 of an unknown file: nothing tells which
// projects exist.
func (a *API) handleOutputFile(w http.ResponseWriter, r *http.Request) error {
	notFound := sim.Errorf(sim.CodeNotFound, msgFileNotFound)
	p, err := a.svc.ProjectOutput(r.Context(), chi.URLParam(r, "project_id"))
	if sim.ErrorCode(err) == sim.CodeNotFound {
		return notFound
	}
	if err != nil {
		return err
	}
	gen, err := strconv.Atoi(chi.URLParam(r, "gen"))
	if err != nil || gen != p.OutputGen || gen == 0 || p.Status == sim.StatusError {
		return notFound
	}
	sig := r.URL.Query().Get(signedParam)
	if subtle.ConstantTimeCompare([]byte(sig), []byte(a.svc.OutputSignature(p))) != 1 {
		return notFound
	}
	name := chi.URLParam(r, "file")
	var render func() io.ReadSeeker
	switch name {
	case fileAudio:
		t := Track(p)
		w.Header().Set("Content-Type", "audio/wav")
		render = func() io.ReadSeeker { return audio.NewWAVReader(t) }
	case fileVideo:
		t := VideoTrack(p)
		w.Header().Set("Content-Type", "video/quicktime")
		render = func() io.ReadSeeker { return audio.NewMOVReader(t) }
	default:
		return notFound
	}
	jw := &httpx.ContentErrorWriter{ResponseWriter: w, Body: contentErrorBody}
	rs := render()
	// A GET is served from the output cache; a HEAD renders nothing.
	if r.Method == http.MethodGet {
		size, err := rs.Seek(0, io.SeekEnd)
		if err == nil {
			_, err = rs.Seek(0, io.SeekStart)
		}
		if err != nil {
			return err
		}
		key := a.outputNS + p.ID + "/" + strconv.Itoa(gen) + "/" + name
		if f, ok := a.outputs.open(key, size, func() io.Reader { return render() }); ok {
			defer f.Close()
			http.ServeContent(jw, r, name, p.CompletedAt, f)
			return nil
		}
	}
	http.ServeContent(jw, r, name, p.CompletedAt, rs)
	return nil
}

// contentErrorBody renders http.ServeContent's errors in the platform envelope.
func contentErrorBody(status int) []byte {
	msg := "Range not satisfiable: " + http.StatusText(status)
	if status != http.StatusRequestedRangeNotSatisfiable {
		msg = http.StatusText(status)
	}
	body, _ := json.Marshal(Envelope{Error: "ValidationError", Message: msg})
	return append(body, '\n')
}
