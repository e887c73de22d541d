package httpx

// Messages shared by the HTTP adapters, and those of this package. Tests,
// golden files and the OpenAPI examples quote them: keep them byte for byte.
const (
	// MsgNoControlRoute and MsgMethodNotAllowed take the method and the path
	// of the request.
	MsgNoControlRoute   = "No control route %s %s"
	MsgMethodNotAllowed = "Method %s is not allowed on %s"

	// A request body that did not arrive (BodyError.Message, fidelity
	// HW2): the idle timeout and the bytes received; the bytes received
	// and declared; the bytes received of a chunked body.
	MsgBodyStalled = "The request body stopped arriving: no byte came for %s (%d bytes received); send the body without pausing"
	// MsgBodySlow: the bytes received, the time taken, the minimum rate
	// and its grace (fidelity HW5).
	MsgBodySlow              = "The request body arrived too slowly: %d bytes in %s, under the minimum of %d bytes per second after the first %s; send the body faster"
	MsgBodyIncomplete        = "The request body ended early: %d of the %d bytes declared by Content-Length arrived before the client closed the connection"
	MsgBodyIncompleteChunked = "The request body ended early: %d bytes arrived, then the connection closed (or the chunked encoding broke) before the last chunk"
	// MsgNoSpace: the simulator's disk is full (fidelity HW4).
	MsgNoSpace = "The simulator could not store the request body: its disk is full (see the dubsim log)"
	// MsgIncompleteJSON is the detail of sim.MsgMalformedJSON for a body
	// that ends inside the JSON value (HW4).
	MsgIncompleteJSON = "the JSON ends early: the body stops before the value is complete (truncated?)"
)
