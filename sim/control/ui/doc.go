// Package ui serves dubsim's web application: the dashboard at /_sim/ui/, the control views it
// reads, and the page behind a studio project's projectUrl, all embedded in the binary.
//
// It serves dubsim's own small web application: the dashboard at /_sim/ui/
// (static files that read the control API), the control API's read-only views
// the dashboard needs (a platform project with its scripts, its dubbed audio,
// the studio records), and the page behind a studio project's projectUrl
// (/projects/{id}), rendered on the server.
//
// Everything is embedded in the binary; nothing is fetched from elsewhere,
// so it works offline.
package ui
