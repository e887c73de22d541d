package studio

import (
	"net/http"

	"github.com/dubsim/dubsim/sim"
)

// Envelope is the studio error body: {"error": <text>} (the newest docs).
type Envelope struct {
	Error string `json:"error"`
}

// Status of each code in the studio interface. The newest docs answer a
// missing or invalid key and another company's project with 400, and a
// missing video with 404 {"error":"Not Found"}; the rest follows HTTP
// convention (see docs/fidelity.md).
var statusOf = map[sim.Code]int{
	sim.CodeValidation:      http.StatusBadRequest,
	sim.CodeUnauthorized:    http.StatusBadRequest,
	sim.CodeAccessDenied:    http.StatusBadRequest,
	sim.CodeForbidden:       http.StatusForbidden,
	sim.CodePaymentRequired: http.StatusPaymentRequired,
	sim.CodeNotFound:        http.StatusNotFound,
	sim.CodeVideoInfo:       http.StatusBadRequest,
	sim.CodeConflict:        http.StatusConflict,
	sim.CodeIdempotency:     http.StatusUnprocessableEntity,
	sim.CodeTooLarge:        http.StatusRequestEntityTooLarge,
	sim.CodeRateLimited:     http.StatusTooManyRequests,
	sim.CodeMethod:          http.StatusMethodNotAllowed,
	sim.CodeRoute:           http.StatusNotFound,
	sim.CodeInternal:        http.StatusInternalServerError,
}

// Render maps an error to the studio status and envelope.
func Render(err error) (int, any) {
	status, ok := statusOf[sim.ErrorCode(err)]
	if !ok {
		status = http.StatusInternalServerError
	}
	msg := sim.ErrorMessage(err)
	switch {
	case sim.ErrorCode(err) == sim.CodeUnauthorized:
		msg = sim.MsgStudioAuth // the studio's wording for any key refusal
	case msg == "":
		msg = sim.MsgInternal
	}
	return status, Envelope{Error: msg}
}

func invalid(format string, args ...any) error {
	return sim.Errorf(sim.CodeValidation, format, args...)
}
