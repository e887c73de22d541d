package platform

import (
	"cmp"
	"net/http"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/internal/httpx"
)

// Envelope is the platform error body: {"error": <name>, "message": <text>}.
type Envelope = httpx.ControlEnvelope

// Error names of the platform envelope and the status of each code. The
// names ValidationError, UnauthorizedError, PaymentRequiredError,
// NotFoundError and VideoInfoError are the provider's; the statuses are not
// documented and follow HTTP convention (see docs/fidelity.md).
var statusOf = map[sim.Code]struct {
	status int
	name   string
}{
	sim.CodeValidation:      {http.StatusBadRequest, "ValidationError"},
	sim.CodeUnauthorized:    {http.StatusUnauthorized, "UnauthorizedError"},
	sim.CodePaymentRequired: {http.StatusPaymentRequired, "PaymentRequiredError"},
	sim.CodeForbidden:       {http.StatusForbidden, "ForbiddenError"},
	sim.CodeAccessDenied:    {http.StatusForbidden, ""},
	sim.CodeNotFound:        {http.StatusNotFound, "NotFoundError"},
	sim.CodeVideoInfo:       {http.StatusBadRequest, "VideoInfoError"},
	sim.CodeConflict:        {http.StatusConflict, "ConflictError"},
	sim.CodeIdempotency:     {http.StatusUnprocessableEntity, "IdempotencyError"},
	sim.CodeTooLarge:        {http.StatusRequestEntityTooLarge, "ValidationError"},
	sim.CodeRateLimited:     {http.StatusTooManyRequests, "RateLimitError"},
	sim.CodeMethod:          {http.StatusMethodNotAllowed, "MethodNotAllowedError"},
	sim.CodeRoute:           {http.StatusNotFound, "NotFoundError"},
	sim.CodeInternal:        {http.StatusInternalServerError, "InternalServerError"},
}

// Render maps an error to the platform status and envelope.
func Render(err error) (int, any) {
	m, ok := statusOf[sim.ErrorCode(err)]
	if !ok {
		m = statusOf[sim.CodeInternal]
	}
	msg := cmp.Or(sim.ErrorMessage(err), sim.MsgInternal)
	if m.name == "" {
		// The voice cloning refusal: a body with only "error", whose text is
		// the message (the spec's error table).
		return m.status, struct {
			Error string `json:"error"`
		}{msg}
	}
	return m.status, Envelope{Error: m.name, Message: msg}
}
