//go:build race

package platform_test

// raceEnabled tells memory assertions that the race detector distorts
// allocation figures.
const raceEnabled = true
