package journal

// Messages of the journal's control routes, dubsim's own wording. Tests and
// golden files quote them: keep them byte for byte, with their format verbs
// in the same order.
const (
	// Routes.
	msgDeleteQuery    = "DELETE %s takes no query parameters; got %q"
	msgFormat         = "format must be json or text; got %q"
	msgMalformedQuery = "Malformed query string: %s"

	// Filters (query parameters and verify matchers).
	msgBadStatus          = "status must be a status code such as 404 (0 for aborted requests) or a class such as 4xx; got %q"
	msgStatusFilter       = "status must be a number or a string such as \"4xx\"; got %s"
	msgFilterMethod       = "method must be an HTTP method such as GET; got %q"
	msgPathPattern        = "path must start with / (a * matches any run of characters); got %q"
	msgSince              = "since must be a sequence id (a whole number, 0 or more); got %q"
	msgLimit              = "limit must be a whole number from 0 (no limit) to 2147483647; got %q"
	msgUnknownQueryParam  = "Unknown query parameter %q; use %s"
	msgRepeatedQueryParam = "Query parameter %q is given %d times; give it once"

	// Verify.
	msgVerifyMethod      = "method must be an HTTP method such as POST; got %q"
	msgHeaderTwice       = "headers: %s is given twice (header names are case-insensitive)"
	msgHeaderNotRecorded = "headers: %q is not recorded by the journal; it keeps %s"
	msgNegativeCount     = "%s must be 0 or more; got %d"
	msgCountCombined     = "count cannot be combined with at_least or at_most"
	msgAtLeastAtMost     = "at_least (%d) is greater than at_most (%d)"
)
