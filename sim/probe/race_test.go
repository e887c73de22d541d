//go:build race

package probe

// raceEnabled reports whether the race detector is on (it slows the
// synthesis down a lot).
const raceEnabled = true
