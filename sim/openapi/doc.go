// Package openapi holds dubsim's OpenAPI 3.1 documents (platform, studio, control and their merge),
// embedded and served under /_sim/openapi*, with the contract tests that hold dubsim to them.
//
// In the combined document of the shared address, the two interfaces'
// colliding operations (GET and POST on /api/v1/projects...) become one
// operation whose bodies are oneOf both. docs/openapi/ holds copies that a
// test keeps identical.
package openapi
