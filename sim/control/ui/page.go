package ui

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/control"
	"github.com/dubsim/dubsim/sim/internal/httpx"
	"github.com/go-chi/chi/v5"
)

// The page behind a studio project's projectUrl: HTML with no script, so it
// reads the same in any browser and in a test.

//go:embed templates/page.css
var pageCSS string

// pageCSP allows the page's own inline style and nothing else.
const pageCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"css":  func() template.CSS { return template.CSS(pageCSS) },
	"time": timeOrEmpty,
}).ParseFS(files, "templates/*.html"))

type pageData struct {
	Project    sim.StudioProject
	Company    string
	Manager    string
	CreatedBy  string
	Folders    []sim.Folder // from the top folder down to the project's
	Glossaries []glossaryRow
	Videos     []videoRow
	Now        string
	Dashboard  string // the dashboard's address, "" when not served here
}

type glossaryRow struct {
	Field string // the API field: translationGlossary, ...
	ID    string
	Name  string
	Kind  string
	Langs string
	Known bool
}

type videoRow struct {
	V        sim.Video
	Duration string
	Langs    string
	Guidance []keyValue
	Meta     []keyValue
	Pipeline []keyValue
	Arts     []keyValue
}

type keyValue struct{ Key, Value string }

type errorPage struct {
	Status  int
	Title   string
	Message string
}

// PageRoutes serves GET and HEAD /projects/{id}: the studio project's page.
func (u *UI) PageRoutes(dashboard bool) http.Handler {
	r := chi.NewRouter()
	h := func(w http.ResponseWriter, r *http.Request) { u.servePage(w, r, dashboard) }
	r.Get("/projects/{id}", h)
	r.Head("/projects/{id}", h)
	return r
}

func (u *UI) servePage(w http.ResponseWriter, r *http.Request, dashboard bool) {
	id := chi.URLParam(r, "id")
	d, err := u.src.StudioDump(r.Context(), sim.StudioFilter{ProjectID: id})
	if err != nil || len(d.Projects) != 1 {
		status := http.StatusNotFound
		msg := "There is no studio project " + id + "."
		if err != nil && sim.ErrorCode(err) != sim.CodeNotFound {
			status, msg = http.StatusInternalServerError, sim.MsgInternal
			if u.api.Log != nil {
				u.api.Log.Error("project page", "id", id, "err", err)
			}
		}
		u.writePage(w, r, status, "error.html", errorPage{Status: status, Title: http.StatusText(status), Message: msg})
		return
	}
	data := buildPage(d, u.src.Now())
	if dashboard {
		data.Dashboard = httpx.BasePath(r.Context()) + DashboardPath
	}
	u.writePage(w, r, http.StatusOK, "project.html", data)
}

func (u *UI) writePage(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, name, data); err != nil {
		if u.api.Log != nil {
			u.api.Log.Error("project page template", "err", err)
		}
		status, buf = http.StatusInternalServerError, *bytes.NewBufferString("internal error\n")
	}
	h := setHeaders(w, "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}

// buildPage names the ids of a one-project dump.
func buildPage(d sim.StudioDump, now time.Time) pageData {
	p := d.Projects[0]
	data := pageData{Project: p, Now: control.Time(now)}
	for _, c := range d.Companies {
		if c.ID == p.CompanyID {
			data.Company = c.Name
		}
	}
	users := byID(d.Users, func(u sim.User) string { return u.ID })
	person := func(id string) string {
		if u, ok := users[id]; ok {
			return u.Name + " <" + u.Email + ">"
		}
		return id
	}
	data.Manager, data.CreatedBy = person(p.ManagerID), person(p.CreatedBy)
	folders := byID(d.Folders, func(f sim.Folder) string { return f.ID })
	for id, seen := p.FolderID, 0; id != "" && seen < len(d.Folders)+1; seen++ {
		f, ok := folders[id]
		if !ok {
			data.Folders = append([]sim.Folder{{ID: id}}, data.Folders...)
			break
		}
		data.Folders = append([]sim.Folder{f}, data.Folders...)
		id = f.ParentID
	}
	glossaries := byID(d.Glossaries, func(g sim.Glossary) string { return g.ID })
	for _, f := range []struct{ field, id string }{
		{"translationGlossary", p.TranslationGlossary},
		{"voicesGlossary", p.VoicesGlossary},
		{"pronunciationGlossary", p.PronunciationGlossary},
	} {
		row := glossaryRow{Field: f.field, ID: f.id}
		if g, ok := glossaries[f.id]; ok {
			row.Known, row.Name, row.Kind, row.Langs = true, g.Name, string(g.Kind), strings.Join(g.Langs, ", ")
		}
		data.Glossaries = append(data.Glossaries, row)
	}
	for _, v := range d.Videos {
		data.Videos = append(data.Videos, videoRowOf(v))
	}
	sort.SliceStable(data.Videos, func(i, j int) bool { return data.Videos[i].V.CreatedAt.Before(data.Videos[j].V.CreatedAt) })
	return data
}

func byID[T any](items []T, id func(T) string) map[string]T {
	m := make(map[string]T, len(items))
	for _, it := range items {
		m[id(it)] = it
	}
	return m
}

func videoRowOf(v sim.Video) videoRow {
	row := videoRow{V: v, Langs: strings.Join(v.DstLangs, ", ")}
	if v.DurationSeconds != nil {
		row.Duration = formatSeconds(*v.DurationSeconds)
	}
	if g := v.Guidance; g != nil {
		if g.Common != nil {
			row.Guidance = append(row.Guidance, keyValue{"All languages", *g.Common})
		}
		langs := slices.Sorted(maps.Keys(g.ByLang))
		for _, l := range langs {
			row.Guidance = append(row.Guidance, keyValue{l, g.ByLang[l]})
		}
	}
	for _, sv := range v.StringVariables {
		row.Meta = append(row.Meta, keyValue{sv.Key, sv.Value})
	}
	if o := v.Pipeline; o != nil {
		for _, b := range []struct {
			name string
			v    *bool
		}{{"shouldAutomateTranscription", o.ShouldAutomateTranscription}, {"shouldAutomateTranslation", o.ShouldAutomateTranslation}, {"shouldAutomateVoiceSelection", o.ShouldAutomateVoiceSelection}} {
			if b.v != nil {
				row.Pipeline = append(row.Pipeline, keyValue{b.name, strconv.FormatBool(*b.v)})
			}
		}
	}
	for _, a := range []struct{ name, id string }{
		{"source", v.SourceArtifactID}, {"background", v.BackgroundArtifactID},
		{"international mix", v.InternationalMixArtifactID}, {"vocals (HITL)", v.VocalsHitlArtifactID},
	} {
		if a.id != "" {
			row.Arts = append(row.Arts, keyValue{a.name, a.id})
		}
	}
	return row
}

// formatSeconds writes a duration as H:MM:SS.s (M:SS.s under an hour).
func formatSeconds(s float64) string {
	if s < 0 {
		s = 0
	}
	total := time.Duration(s * float64(time.Second)).Round(100 * time.Millisecond)
	h, m := int(total.Hours()), int(total.Minutes())%60
	sec := (total - time.Duration(h)*time.Hour - time.Duration(m)*time.Minute).Seconds()
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%04.1f", h, m, sec)
	}
	return fmt.Sprintf("%d:%04.1f", m, sec)
}

func timeOrEmpty(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return control.Time(t)
}
