// Package ui serves dubsim's web application: the dashboard at /_sim/ui/ (static files that read
// the control API), the control views it reads, and the page behind a studio project's projectUrl
// (/projects/{id}, rendered on the server). Everything is embedded in the binary, so it works offline.
package ui
