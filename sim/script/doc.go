// Package script parses client transcripts (SRT, WebVTT, plain text) and builds the deterministic
// scripts of simulated projects: synthetic sources, pseudo translations, speakers, timing.
package script
