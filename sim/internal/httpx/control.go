package httpx

import (
	"cmp"
	"net/http"

	"github.com/dubsim/dubsim/sim"
	"github.com/go-chi/chi/v5"
)

// ControlEnvelope is the control API's error body (the platform's shape).
type ControlEnvelope struct {
	Error   string `json:"error"`
	Message string `json:"message"`
}

type controlName struct {
	status int
	name   string
}

var controlNames = map[sim.Code]controlName{
	sim.CodeValidation: {http.StatusBadRequest, "ValidationError"},
	sim.CodeTooLarge:   {http.StatusRequestEntityTooLarge, "ValidationError"},
	sim.CodeConflict:   {http.StatusConflict, "ConflictError"},
	sim.CodeRoute:      {http.StatusNotFound, "NotFoundError"},
	sim.CodeNotFound:   {http.StatusNotFound, "NotFoundError"},
	sim.CodeMethod:     {http.StatusMethodNotAllowed, "MethodNotAllowedError"},
	sim.CodeLimit:      {http.StatusTooManyRequests, "SandboxLimitError"},
}

// RenderControl maps an error to the control API's status and envelope.
func RenderControl(err error) (int, any) {
	m, ok := controlNames[sim.ErrorCode(err)]
	if !ok {
		m = controlName{http.StatusInternalServerError, "InternalServerError"}
	}
	return m.status, ControlEnvelope{Error: m.name, Message: cmp.Or(sim.ErrorMessage(err), sim.MsgInternal)}
}

// NewControlRouter returns a router of an API, with mw first: an unknown
// route answers 404 with noRoute (a template of the method and the path), a
// known path with another method 405 with Allow.
func NewControlRouter(api API, noRoute string, mw ...func(http.Handler) http.Handler) chi.Router {
	r := chi.NewRouter()
	r.Use(mw...)
	r.NotFound(api.Handle(func(w http.ResponseWriter, r *http.Request) error {
		return sim.Errorf(sim.CodeRoute, noRoute, r.Method, r.URL.Path)
	}))
	r.MethodNotAllowed(WithAllow(r, api.Handle(func(w http.ResponseWriter, r *http.Request) error {
		return sim.Errorf(sim.CodeMethod, MsgMethodNotAllowed, r.Method, r.URL.Path)
	})))
	return r
}
