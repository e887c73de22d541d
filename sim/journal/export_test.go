package journal

// Size is what an entry counts against the bounds, for the tests.
func Size(e Entry) int64 { return e.size() }

// Used is the bytes the journals of m keep now, for the tests.
func (m *Memory) Used() int64 { return m.used.Load() }
