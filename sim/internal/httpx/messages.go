package httpx

// Messages shared by the HTTP adapters, and those of this package. Tests,
// golden files and the OpenAPI examples quote them: keep them byte for byte.
const (
	// MsgNoControlRoute and MsgMethodNotAllowed take the method and the path
	// of the request.
	MsgNoControlRoute   = "No control route %s %s"
	MsgMethodNotAllowed = "Method %s is not allowed on %s"

	msgIdempotencyKeyLength = "Idempotency-Key must be at most %d characters"
)
