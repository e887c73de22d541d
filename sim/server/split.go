package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/journal"
)

// HeaderInterface lets a client say which interface a request is for, on
// the listener that serves both: "platform" or "studio".
const HeaderInterface = "X-Dubsim-Interface"

// Interface names.
const (
	Platform = "platform"
	Studio   = "studio"
)

// sniffLimit is how much of a POST /api/v1/projects body is read to tell the
// two create requests apart.
const sniffLimit = 64 << 10

// Fields only one of the two Create Project bodies has.
var (
	platformCreateFields = []string{"source_lang", "target_lang", "source_video_url", "mixing_mode", "use_emotional_transfer",
		"use_soundalike_voices", "source_script_content", "source_script", "use_fixed_timings", "glossary_content", "tts_volume"}
	studioCreateFields = []string{"managerEmail", "translationsGlossaryId", "voicesGlossaryId", "pronunciationGlossaryId"}
)

// InterfaceByPath decides which interface serves a request from its method,
// path and the X-Dubsim-Interface header; "" means the body decides
// (POST /api/v1/projects). The rule (README, "One address, two
// interfaces"):
//
//   - the header, when it names an interface, wins;
//   - /api/v1/artifacts..., /api/projects/... and presigned uploads are
//     studio paths;
//   - GET /api/v1/projects (the list) is studio;
//   - /api/v1/projects/{id}/videos... and PATCH /api/v1/projects/{id} are
//     studio; DELETE /api/v1/projects/{id} and the re-translation paths are
//     platform (only one interface has them);
//   - GET /api/v1/projects/{id}: an id of 24 lowercase hex characters (a
//     studio id) is studio, anything else (platform ids are 9 digits) is
//     platform;
//   - everything else is platform.
func InterfaceByPath(r *http.Request) string {
	switch h := strings.ToLower(strings.TrimSpace(r.Header.Get(HeaderInterface))); h {
	case Platform, Studio:
		return h
	}
	p := r.URL.Path
	switch {
	case strings.HasPrefix(p, "/api/v1/artifacts/") || p == "/api/v1/artifacts" ||
		strings.HasPrefix(p, "/api/projects/") || strings.HasPrefix(p, "/_uploads/"):
		return Studio
	case p == "/api/v1/projects" || p == "/api/v1/projects/":
		switch r.Method {
		case http.MethodGet:
			return Studio
		case http.MethodPost:
			return ""
		}
		return Platform
	case strings.HasPrefix(p, "/api/v1/projects/"):
		id, rest, _ := strings.Cut(strings.TrimPrefix(p, "/api/v1/projects/"), "/")
		switch {
		case rest == "videos" || strings.HasPrefix(rest, "videos/"):
			return Studio // only the studio interface has videos
		case rest != "":
			return Platform // translations, validate-translation-request
		case r.Method == http.MethodDelete:
			return Platform // only the platform interface deletes projects
		case r.Method == http.MethodPatch:
			return Studio // only the studio interface updates projects
		case sim.IsStudioID(id):
			return Studio
		}
		return Platform
	}
	return Platform
}

// InterfaceByBody decides a POST /api/v1/projects from the top-level field
// names of its JSON body: a platform-only field makes it platform, else a
// studio-only field makes it studio, else (a body with only "name", or no
// JSON object) it goes to fallback.
func InterfaceByBody(body []byte, fallback string) string {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fallback
	}
	studio := false
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			break
		}
		key, _ := t.(string)
		for _, f := range platformCreateFields {
			if key == f {
				return Platform
			}
		}
		for _, f := range studioCreateFields {
			if key == f {
				studio = true
			}
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			break
		}
	}
	if studio {
		return Studio
	}
	return fallback
}

// split serves the platform and studio interfaces on one address.
type split struct {
	platform, studio http.Handler
	fallback         string
}

func (s split) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	iface := InterfaceByPath(r)
	if iface == "" {
		head, err := io.ReadAll(io.LimitReader(r.Body, sniffLimit))
		if err != nil {
			head = nil
		}
		iface = InterfaceByBody(head, s.fallback)
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
	}
	if iface == Studio || strings.HasPrefix(r.URL.Path, "/api/") {
		journal.SetInterface(r.Context(), iface)
	}
	if iface == Studio {
		s.studio.ServeHTTP(w, r)
		return
	}
	s.platform.ServeHTTP(w, r)
}
