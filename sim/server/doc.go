// Package server is the router of a dubsim instance: it mounts the parts
// sim/app builds behind one routing decision and the middleware every
// interface shares.
package server
