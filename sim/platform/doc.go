// Package platform is the HTTP adapter of the platform interface: balance, options, voices, dubbing
// projects, re-translations and output downloads; routes.go holds its whole route table.
package platform
