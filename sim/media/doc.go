// Package media resolves what dubsim learns of a media URL: fixture rules, then the media itself
// when its host may be contacted (loopback or allow-listed), else a duration derived from the URL.
//
// It also downloads media from those hosts and inspects media headers. No
// other host is ever contacted.
package media
