package ui

// Messages of the dashboard routes, dubsim's own wording. Tests quote them:
// keep them byte for byte.
const (
	msgNoDashboardFile   = "No dashboard file %s"
	msgNoOutputAudio     = "Project %s has no output audio (status %s)"
	msgUnknownQueryParam = "Unknown query parameter %q; use company_id"
)
