package platform

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/idempotency"
	"github.com/dubsim/dubsim/sim/internal/gencache"
	"github.com/dubsim/dubsim/sim/internal/httpx"
	"github.com/go-chi/chi/v5"
	"github.com/go-playground/validator/v10"
)

// Service is what the platform handlers need from the domain.
type Service interface {
	Account(ctx context.Context, apiKey string) (sim.Account, error)
	Catalog() *sim.Catalog
	CreateProject(ctx context.Context, apiKey string, np sim.NewProject, idem *sim.IdemWrite[sim.Receipt]) (sim.Receipt, error)
	Project(ctx context.Context, apiKey, id string) (sim.Project, error)
	ProjectOutput(ctx context.Context, id string) (sim.Project, error)
	// OutputSignature signs the download URLs of p's current outputs.
	OutputSignature(p sim.Project) string
	DeleteProject(ctx context.Context, apiKey, id string) error
	Retranslate(ctx context.Context, apiKey, id string, in sim.RetranslationInput, dryRun bool, idem *sim.IdemWrite[sim.Receipt]) (sim.Receipt, error)
	// Generation changes with every committed write: a rendered Get
	// Project answer is served again only while it has not.
	Generation() uint64
	idempotency.Store
}

// Config configures the platform API.
type Config struct {
	Service Service
	Log     *slog.Logger
	// PublicURL is the base of download URLs ("": the request's host).
	PublicURL string
	// RejectUnknownFields refuses JSON bodies with fields the API does not define.
	RejectUnknownFields bool
	// CreateStatus is the status of a successful Create Project (200 or 201).
	CreateStatus int
	// IdemSlots is shared with the other interface of the same store (nil: own).
	IdemSlots *idempotency.Slots
	// OutputCache keeps rendered output files (nil: none); Close removes
	// this API's files from it.
	OutputCache *OutputCache
}

// API is the platform interface.
type API struct {
	svc       Service
	http      httpx.API
	dec       httpx.Decoder
	idem      *idempotency.Middleware
	validate  *validator.Validate
	publicURL string
	created   int
	catalog   atomic.Pointer[catalogBodies]
	rendered  gencache.Cache[rendered]
	outputs   *OutputCache
	outputNS  string // prefixes this API's keys in outputs
}

// New returns the platform API.
func New(cfg Config) *API {
	a := &API{
		svc:       cfg.Service,
		http:      httpx.API{Render: Render, Log: cfg.Log},
		dec:       httpx.Decoder{RejectUnknown: cfg.RejectUnknownFields},
		publicURL: strings.TrimRight(cfg.PublicURL, "/"),
		created:   cmp.Or(cfg.CreateStatus, http.StatusOK),
	}
	a.rendered.Size = renderedSize
	if cfg.OutputCache != nil {
		a.outputs, a.outputNS = cfg.OutputCache, cfg.OutputCache.namespace()
	}
	a.idem = &idempotency.Middleware{Store: cfg.Service, API: a.http, Limit: bodyLimit,
		Replayers: map[string]idempotency.Replayer{recipeCloning: replayCloning}, Slots: cfg.IdemSlots}
	a.validate = newValidator(cfg.Service.Catalog)
	return a
}

// Close removes its files from the output cache.
func (a *API) Close() error {
	a.outputs.dropPrefix(a.outputNS)
	return nil
}

// Routes returns the whole route table of the platform interface.
func (a *API) Routes() chi.Router {
	r := httpx.NewControlRouter(a.http, msgNoRoute, a.http.Recover)

	r.Group(func(r chi.Router) {
		r.Use(a.http.Authenticate(sim.MsgInvalidAPIKey, func(ctx context.Context, key string) (context.Context, error) {
			acct, err := a.svc.Account(ctx, key)
			if err != nil {
				return nil, err
			}
			return httpx.WithAccount(ctx, acct), nil
		}))
		r.Use(a.idem.Wrap(httpx.KeyScope))
		r.Get("/api/v1/balance", a.http.Handle(a.handleBalance))
		r.Get("/api/v1/options", a.http.Handle(a.handleOptions))
		r.Get("/api/v1/voices", a.http.Handle(a.handleVoices))
		r.Post("/api/v1/projects", a.http.Handle(a.handleCreateProject))
		r.Get("/api/v1/projects/{project_id}", a.http.Handle(a.handleGetProject))
		r.Delete("/api/v1/projects/{project_id}", a.http.Handle(a.handleDeleteProject))
		r.Post("/api/v1/projects/{project_id}/translations", a.http.Handle(a.handleRetranslate))
		r.Post("/api/v1/projects/{project_id}/validate-translation-request", a.http.Handle(a.handleValidateRetranslation))
		r.Post(pathCloning, a.http.Handle(a.handleSynthesize))
	})

	// Output downloads: unauthenticated, like the provider's storage links.
	r.Get("/files/projects/{project_id}/{gen}/{file}", a.http.Handle(a.handleOutputFile))
	r.Head("/files/projects/{project_id}/{gen}/{file}", a.http.Handle(a.handleOutputFile))
	return r
}

// pathCloning is the one POST whose body is not JSON.
const pathCloning = "/api/v1/cloning/synthesize"

// bodyLimit is the body limit of r's route: the idempotency middleware
// reads no more.
func bodyLimit(r *http.Request) int64 {
	if r.URL.Path == pathCloning {
		return maxCloneBody
	}
	return httpx.DefaultMaxBody
}

// HeaderAuthHint carries a precise reason for a 401; the body keeps the
// documented message.
const HeaderAuthHint = httpx.HeaderAuthHint

func account(r *http.Request) sim.Account {
	acct, _ := httpx.AccountFrom(r.Context())
	return acct
}
