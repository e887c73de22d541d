// Package audio writes the media dubsim serves, in memory and from the
// standard library only: a speech-like synthesiser, its mixing with a
// synthetic original track, and WAV and QuickTime writers that stream the
// samples on demand. Reading media is package probe's.
package audio
