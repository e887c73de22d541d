package studio

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/idempotency"
	"github.com/dubsim/dubsim/sim/internal/httpx"
	"github.com/go-chi/chi/v5"
)

// Service is what the studio handlers need from the domain.
type Service interface {
	Now() time.Time
	// Wall is real time plus every clock advance: the rate limits' time.
	Wall() time.Time
	Catalog() *sim.Catalog
	Caller(ctx context.Context, apiKey string) (sim.Caller, error)

	PresignUpload(ctx context.Context, c sim.Caller, fileName string) (sim.Upload, error)
	UploadSignature(u sim.Upload) string
	Upload(ctx context.Context, id string) (sim.Upload, error)
	ReceiveUpload(ctx context.Context, id string, body io.Reader) (sim.Upload, error)

	CreateArtifact(ctx context.Context, c sim.Caller, na sim.NewArtifact, idem *sim.IdemWrite[sim.Artifact]) (sim.Artifact, error)
	Artifact(ctx context.Context, c sim.Caller, id string) (sim.Artifact, error)

	ListStudioProjects(ctx context.Context, c sim.Caller) ([]sim.StudioProject, error)
	StudioProject(ctx context.Context, c sim.Caller, id string) (sim.StudioProject, error)
	CreateStudioProject(ctx context.Context, c sim.Caller, in sim.StudioProjectInput, idem *sim.IdemWrite[sim.StudioProject]) (sim.StudioProject, error)
	UpdateStudioProject(ctx context.Context, c sim.Caller, id string, in sim.StudioProjectInput) (sim.StudioProject, error)

	CreateVideo(ctx context.Context, c sim.Caller, projectID string, nv sim.NewVideo, idem *sim.IdemWrite[sim.Video]) (sim.Video, error)
	ListVideos(ctx context.Context, c sim.Caller, projectID string) ([]sim.Video, error)
	Video(ctx context.Context, c sim.Caller, projectID, videoID string) (sim.Video, error)
	UpdateVideo(ctx context.Context, c sim.Caller, projectID, videoID string, u sim.VideoUpdate) (sim.Video, error)

	idempotency.Store
}

// Config configures the studio API.
type Config struct {
	Service Service
	Log     *slog.Logger
	// PublicURL is the base of the URLs answers hold ("": the request's host).
	PublicURL string
	// RejectUnknownFields refuses JSON bodies with fields the endpoint does not define.
	RejectUnknownFields bool
	// CreateStatus is the status of a successful creation (200 or 201).
	CreateStatus int
	// LaxEnums accepts any processingType and status on video update.
	LaxEnums bool
	// DefaultRateLimit applies to keys without a rate limit of their own.
	DefaultRateLimit sim.RateLimit
	// IdemSlots is shared with the other interface of the same store (nil: own).
	IdemSlots *idempotency.Slots
}

// API is the studio interface.
type API struct {
	svc        Service
	http       httpx.API
	rejectUnk  bool
	laxEnums   bool
	publicURL  string
	created    int
	idem       *idempotency.Middleware
	limiter    *limiter
	defaultLim sim.RateLimit
}

// New returns the studio API.
func New(cfg Config) *API {
	a := &API{
		svc:        cfg.Service,
		http:       httpx.API{Render: Render, Log: cfg.Log},
		rejectUnk:  cfg.RejectUnknownFields,
		laxEnums:   cfg.LaxEnums,
		publicURL:  strings.TrimRight(cfg.PublicURL, "/"),
		created:    cmp.Or(cfg.CreateStatus, http.StatusOK),
		limiter:    &limiter{keys: map[string]*window{}},
		defaultLim: cfg.DefaultRateLimit,
	}
	// Every POST of the interface has a JSON body.
	a.idem = &idempotency.Middleware{Store: cfg.Service, API: a.http, Slots: cfg.IdemSlots,
		Limit: func(*http.Request) int64 { return httpx.DefaultMaxBody }}
	return a
}

// UploadPathPrefix is where presigned uploads are PUT.
const UploadPathPrefix = "/_uploads/"

// Routes returns the whole route table of the studio interface.
func (a *API) Routes() chi.Router {
	r := httpx.NewControlRouter(a.http, msgNoRoute, a.http.Recover)

	r.Group(func(r chi.Router) {
		r.Use(a.http.Authenticate(sim.MsgStudioAuth, func(ctx context.Context, key string) (context.Context, error) {
			c, err := a.svc.Caller(ctx, key)
			if err != nil {
				return nil, err
			}
			return httpx.WithCaller(ctx, c), nil
		}))
		r.Use(a.rateLimit)
		r.Use(a.idem.Wrap(httpx.KeyScope))
		r.Get("/api/v1/artifacts/create", a.http.Handle(a.handlePresign))
		r.Post("/api/v1/artifacts/create", a.http.Handle(a.handleCreateArtifact))
		r.Get("/api/v1/artifacts/{artifactId}", a.http.Handle(a.handleGetArtifact))

		r.Get("/api/v1/projects", a.http.Handle(a.handleListProjects))
		r.Post("/api/v1/projects", a.http.Handle(a.handleCreateProject))
		r.Get("/api/v1/projects/{projectId}", a.http.Handle(a.handleGetProject))
		r.Patch("/api/v1/projects/{projectId}", a.http.Handle(a.handleUpdateProject))

		r.Post("/api/v1/projects/{projectId}/videos/create", a.http.Handle(a.handleCreateVideo))
		r.Get("/api/v1/projects/{projectId}/videos", a.http.Handle(a.handleListVideos))
		r.Get("/api/v1/projects/{projectId}/videos/{videoId}", a.http.Handle(a.handleGetVideo))
		r.Patch("/api/projects/{projectId}/videos/{videoId}", a.http.Handle(a.handleUpdateVideo))
	})

	// Presigned uploads: authorised by the URL's signature, not a key.
	r.Put(UploadPathPrefix+"{uploadId}/{fileName}", a.handleUpload)
	return r
}

func caller(r *http.Request) sim.Caller { return httpx.CallerFrom(r.Context()) }

// limiter counts requests per key in fixed windows (a minute and a day) of
// Service.Wall: a client that waits Retry-After gets through, and so does a
// test that advances the clock by it (a frozen simulated clock alone would
// keep a window open forever).
type limiter struct {
	mu   sync.Mutex
	keys map[string]*window
}

type window struct {
	minute, day           time.Time
	minuteCount, dayCount int
}

// allow counts one request of key at now; over a limit it returns the
// seconds until the window ends and the message.
func (l *limiter) allow(key string, lim sim.RateLimit, now time.Time) (int, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.keys[key]
	if w == nil {
		if len(l.keys) > 100_000 {
			l.keys = map[string]*window{}
		}
		w = &window{}
		l.keys[key] = w
	}
	m, d := now.Truncate(time.Minute), now.Truncate(24*time.Hour)
	if !w.minute.Equal(m) {
		w.minute, w.minuteCount = m, 0
	}
	if !w.day.Equal(d) {
		w.day, w.dayCount = d, 0
	}
	if lim.PerDay > 0 && w.dayCount >= lim.PerDay {
		s := retryAfter(d.Add(24*time.Hour), now)
		return s, fmt.Sprintf(sim.MsgRateLimitDay, lim.PerDay, s)
	}
	if lim.PerMinute > 0 && w.minuteCount >= lim.PerMinute {
		s := retryAfter(m.Add(time.Minute), now)
		return s, fmt.Sprintf(sim.MsgRateLimitMinute, lim.PerMinute, s)
	}
	w.minuteCount++
	w.dayCount++
	return 0, ""
}

func retryAfter(end, now time.Time) int {
	s := int((end.Sub(now) + time.Second - 1) / time.Second)
	return max(s, 1)
}

func (a *API) rateLimit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := caller(r)
		lim := a.defaultLim
		if c.Account.RateLimit != nil {
			lim = *c.Account.RateLimit
		}
		if lim.PerMinute > 0 || lim.PerDay > 0 {
			if s, msg := a.limiter.allow(c.Account.APIKey, lim, a.svc.Wall()); s > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(s))
				a.http.WriteError(w, r, sim.Errorf(sim.CodeRateLimited, "%s", msg))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
