// Package audio writes and reads the media dubsim handles, in memory and
// from the standard library only: WAV and QuickTime writers, a speech-like
// synthesiser, and bounded probes of media headers (WAV, FLAC, MP3, MP4/MOV,
// Matroska) for durations and stream formats.
package audio
