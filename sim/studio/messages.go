package studio

// Messages of the studio interface's own routes, dubsim's wording (the
// documented ones are sim.Msg* constants). Tests quote them: keep them byte
// for byte.
const (
	msgNoRoute = "No route %s %s in the studio interface; see the endpoint list in the dubsim README"
)
