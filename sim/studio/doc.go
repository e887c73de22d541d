// Package studio is the HTTP adapter of the studio interface: presigned uploads, artifacts, studio
// projects and videos, and the storage endpoint that receives uploads; routes.go holds its table.
package studio
