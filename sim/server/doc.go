// Package server is the router of a dubsim instance: it mounts the parts
// sim/app builds (the two interfaces, the control API, the dashboard, the
// journal and faults) behind the one routing decision and the middleware
// every interface shares (early answers, body bounds, access log, CORS,
// the control guard, health).
package server
