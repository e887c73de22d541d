//go:build race

package crash

// raceEnabled: the test runs under -race, so dubsim is built with it too and
// a data race in the server fails the test.
const raceEnabled = true
