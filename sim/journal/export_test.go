package journal

// Size is what an entry counts against the bounds, for the tests.
func Size(e Entry) int64 { return e.size() }
