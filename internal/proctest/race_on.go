//go:build race

package proctest

// RaceEnabled is true: the test runs under -race, so dubsim is built with it too
// and a data race in the server fails the test.
const RaceEnabled = true
