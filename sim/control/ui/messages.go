package ui

// Messages of the dashboard routes; tests quote them byte for byte.
const (
	msgNoDashboardFile   = "No dashboard file %s"
	msgNoOutputAudio     = "Project %s has no output audio (status %s)"
	msgUnknownQueryParam = "Unknown query parameter %q; use company_id"
	msgEventsQuery       = "Unknown query parameter %q; /_sim/events takes none"
	msgTooManyStreams    = "Too many event streams open on this simulator (at most %d); retry when one closes"
	msgProcessStreams    = "Too many event streams open in this process (at most %d across its simulators); retry when one closes"

	// The 416 and 412 of the output audio.
	msgRangeNotSatisfiable = "Range not satisfiable: the Range header must name bytes inside the file"
	msgPreconditionFailed  = "Precondition failed: the file changed since If-Unmodified-Since or does not match If-Match"
)
