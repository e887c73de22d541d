package sandbox

import (
	"net/http"
	"strings"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/control"
	"github.com/dubsim/dubsim/sim/internal/httpx"
	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
)

// ControlExtension is the default control API's /_sim/sandboxes.
func (m *Manager) ControlExtension(publicURL string) control.Extension {
	api := httpx.API{Render: httpx.RenderControl, Log: m.log}
	h := func(f httpx.HandlerFunc) http.HandlerFunc { return api.Handle(f) }
	// /sandboxes/{id}/ is the same resource.
	r := httpx.NewControlRouter(api, httpx.MsgNoControlRoute, middleware.StripSlashes)
	c := &controlAPI{m: m, public: strings.TrimRight(publicURL, "/"), dec: httpx.Decoder{MaxBytes: 64 << 10, RejectUnknown: true}}
	r.Get("/sandboxes", h(c.list))
	r.Post("/sandboxes", h(c.create))
	r.Get("/sandboxes/{id}", h(c.get))
	r.Put("/sandboxes/{id}", h(c.create))
	r.Delete("/sandboxes/{id}", h(c.delete))
	// What the dispatcher leaves here: a sandbox that does not exist.
	r.HandleFunc("/sandboxes/{id}/*", h(func(w http.ResponseWriter, r *http.Request) error {
		return unknownSandbox(w, chi.URLParam(r, "id"))
	}))
	return control.Extension{Paths: []string{"/sandboxes", "/sandboxes/*"}, Handler: r}
}

type controlAPI struct {
	m      *Manager
	public string
	dec    httpx.Decoder
}

// View is a sandbox as the control API shows it.
type View struct {
	ID           string            `json:"id"`
	CreatedAt    string            `json:"created_at"`
	LastUsedAt   string            `json:"last_used_at"`
	ExpiresAt    string            `json:"expires_at,omitempty"`
	Clock        ClockView         `json:"clock"`
	APIKeys      map[string]string `json:"api_keys"`
	BaseURL      string            `json:"base_url"`
	ControlURL   string            `json:"control_url"`
	DashboardURL string            `json:"dashboard_url"`
	Deleting     bool              `json:"deleting,omitempty"`
}

// ClockView is a sandbox's clock.
type ClockView struct {
	Now       string  `json:"now"`
	Frozen    bool    `json:"frozen"`
	TimeScale float64 `json:"time_scale"`
}

// ListView is GET /_sim/sandboxes.
type ListView struct {
	Sandboxes  []View `json:"sandboxes"`
	Total      int    `json:"total"`
	Max        int    `json:"max"`
	IdleExpiry string `json:"idle_expiry"`
}

func (c *controlAPI) view(r *http.Request, sb *Sandbox) View {
	base := httpx.BaseURL(r, c.public) + PathPrefix + sb.ID
	clock := sb.Server.Engine.Clock
	keys := map[string]string{}
	prefix := KeyPrefix(sb.ID)
	for _, a := range sb.Server.Engine.Data.Fixtures().Accounts {
		keys[strings.TrimPrefix(a.APIKey, prefix)] = a.APIKey
	}
	v := View{ID: sb.ID, CreatedAt: control.Time(sb.Created), LastUsedAt: control.Time(sb.LastUsed()),
		Clock:   ClockView{Now: control.Time(clock.Now()), Frozen: clock.Frozen(), TimeScale: clock.TimeScale()},
		APIKeys: keys, BaseURL: base, ControlURL: base + "/_sim", DashboardURL: base + "/_sim/ui"}
	if idle := c.m.cfg.Idle; idle > 0 {
		v.ExpiresAt = control.Time(sb.LastUsed().Add(idle))
	}
	v.Deleting = sb.removing()
	return v
}

func (c *controlAPI) list(w http.ResponseWriter, r *http.Request) error {
	boxes := c.m.List()
	out := ListView{Sandboxes: make([]View, 0, len(boxes)), Total: len(boxes), Max: c.m.cfg.Max, IdleExpiry: c.m.cfg.Idle.String()}
	for _, sb := range boxes {
		out.Sandboxes = append(out.Sandboxes, c.view(r, sb))
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (c *controlAPI) get(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "id")
	sb := c.m.Get(id)
	if sb == nil {
		return unknownSandbox(w, id)
	}
	httpx.WriteJSON(w, http.StatusOK, c.view(r, sb))
	return nil
}

type createBody struct {
	Start     *string  `json:"start"`
	TimeScale *float64 `json:"time_scale"`
	Seed      *uint64  `json:"seed"`
}

func (c *controlAPI) create(w http.ResponseWriter, r *http.Request) error {
	var b createBody
	if r.ContentLength != 0 {
		if err := c.dec.Decode(w, r, &b); err != nil {
			return err
		}
	}
	var opts Options
	if b.Start != nil {
		t, err := time.Parse(time.RFC3339Nano, *b.Start)
		if err != nil {
			return sim.Errorf(sim.CodeValidation, "start must be an RFC 3339 time such as 2026-01-01T00:00:00Z; got %q", clip(*b.Start))
		}
		if err := CheckStart(t); err != nil {
			return err
		}
		opts.Start = t
	}
	if b.TimeScale != nil {
		opts.TimeScale = *b.TimeScale
	}
	opts.Seed = b.Seed
	id := chi.URLParam(r, "id")
	sb, err := c.m.Create(r.Context(), id, opts)
	if err != nil {
		old := c.m.Get(id)
		if sim.ErrorCode(err) == sim.CodeLimit || (old != nil && old.removing()) {
			// Slots and ids free up as tests delete their sandboxes: a
			// polling interval, not a promise.
			w.Header().Set("Retry-After", "1")
		}
		return err
	}
	w.Header().Set("Location", "/_sim/sandboxes/"+sb.ID)
	httpx.WriteJSON(w, http.StatusCreated, c.view(r, sb))
	return nil
}

func (c *controlAPI) delete(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "id")
	if err := c.m.Delete(r.Context(), id); err != nil {
		if sim.ErrorCode(err) == sim.CodeNotFound {
			return unknownSandbox(w, id)
		}
		if r.Context().Err() != nil {
			// The client left; the removal goes on (Manager.Delete).
			w.WriteHeader(http.StatusAccepted)
			return nil
		}
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// unknownSandbox is the error of a sandbox that does not exist, its
// message also in HeaderError.
func unknownSandbox(w http.ResponseWriter, id string) error {
	err := notFound(id)
	w.Header().Set(HeaderError, err.Error())
	return err
}
