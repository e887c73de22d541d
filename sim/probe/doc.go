// Package probe reads the media dubsim is given, from the standard library
// only: bounded probes of container headers (WAV, FLAC, MP3, MP4/MOV,
// Matroska) for durations and stream formats, and the pitch of a reference
// voice sample.
package probe
