//go:build !race

package proctest

// RaceEnabled is false: the test runs without -race, and so is dubsim built.
const RaceEnabled = false
