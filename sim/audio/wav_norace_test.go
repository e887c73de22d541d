//go:build !race

package audio

// wavRaceEnabled reports whether the race detector is on (it slows the
// synthesis down a lot).
const wavRaceEnabled = false
