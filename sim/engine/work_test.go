package engine

import (
	"context"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
)

// newWork registers a piece of work needed from needed (zero: nothing
// waits for it).
func newWork(s *workSet, id string, needed time.Time) *work {
	w := &work{kind: WorkDownload, resource: "artifact", id: id, started: t0, needed: needed}
	s.add(w)
	return w
}

func workIDs(ws []*work) []string {
	ids := make([]string, len(ws))
	for i, w := range ws {
		ids[i] = w.id
	}
	return ids
}

// TestWorkSetBlocking: what a time depends on is the work needed by then
// (of one resource, or of all), oldest first; work nothing waits for never
// blocks.
func TestWorkSetBlocking(t *testing.T) {
	t.Parallel()
	var s workSet
	assert.Empty(t, s.all(), "an empty registry")
	at := t0.Add(time.Minute)
	newWork(&s, "c", at)
	newWork(&s, "a", at.Add(time.Second))
	newWork(&s, "probe", time.Time{})
	newWork(&s, "b", at)
	assert.Equal(t, []string{"c", "a", "probe", "b"}, workIDs(s.all()), "in the order added")

	tests := []struct {
		name string
		at   time.Time
		id   string
		want []string
	}{
		{"before anything is needed", at.Add(-time.Nanosecond), "", nil},
		{"at the first need", at, "", []string{"c", "b"}},
		{"later: all but the probe", at.Add(time.Hour), "", []string{"c", "a", "b"}},
		{"of one resource", at.Add(time.Hour), "a", []string{"a"}},
		{"of one resource not needed yet", at, "a", nil},
		{"of a resource without work", at.Add(time.Hour), "z", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws, done := s.blocking(tc.at, tc.id)
			assert.Equal(t, tc.want, nilIfEmpty(workIDs(ws)))
			assert.NotNil(t, done)
		})
	}
}

func pendingIDs(pe *sim.PendingError) []string {
	if pe == nil {
		return nil
	}
	ids := make([]string, len(pe.Pending))
	for i, w := range pe.Pending {
		ids[i] = w.ID
	}
	return ids
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// TestWorkSetRemove: the end of a piece of work closes the channel handed
// out before it, and a new one is handed out after.
func TestWorkSetRemove(t *testing.T) {
	t.Parallel()
	var s workSet
	w1 := newWork(&s, "a", t0)
	w2 := newWork(&s, "b", t0)
	assert.Equal(t, []*work{w1, w2}, s.all(), "oldest first")
	_, done := s.blocking(t0, "")
	select {
	case <-done:
		t.Fatal("closed before any work ended")
	default:
	}
	s.remove(w1)
	select {
	case <-done:
	default:
		t.Fatal("the end of a piece of work closes the channel")
	}
	ws, again := s.blocking(t0, "")
	assert.Equal(t, []string{"b"}, workIDs(ws))
	assert.NotEqual(t, done, again, "a new channel")
	s.remove(w2)
	s.remove(w2) // removing twice is harmless
	assert.Empty(t, s.all())
}

// TestWorkSetWait: a wait ends when nothing it depends on is left, at its
// bound, or with its context, and returns what is still running then.
func TestWorkSetWait(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	canceled, cancel := context.WithCancel(ctx)
	cancel()

	t.Run("nothing to wait for", func(t *testing.T) {
		s := workSet{bound: time.Hour}
		newWork(&s, "later", t0.Add(time.Hour))
		assert.Nil(t, s.waitFor(ctx, t0, ""))
	})
	t.Run("the bound passes", func(t *testing.T) {
		s := workSet{bound: time.Millisecond}
		newWork(&s, "a", t0)
		pe := s.waitFor(ctx, t0, "")
		assert.Equal(t, []string{"a"}, pendingIDs(pe))
		if assert.NotNil(t, pe) {
			assert.Equal(t, t0, pe.At)
			assert.Equal(t, time.Millisecond, pe.Waited)
		}
	})
	t.Run("the context ends", func(t *testing.T) {
		s := workSet{bound: time.Hour}
		newWork(&s, "a", t0)
		assert.Equal(t, []string{"a"}, pendingIDs(s.waitFor(canceled, t0, "a")))
	})
	t.Run("the work ends", func(t *testing.T) {
		s := workSet{bound: time.Hour}
		w := newWork(&s, "a", t0)
		other := newWork(&s, "b", t0.Add(time.Hour))
		got := make(chan *sim.PendingError)
		go func() { got <- s.waitFor(ctx, t0, "") }()
		s.remove(w)
		assert.Nil(t, <-got)
		assert.Equal(t, []*work{other}, s.all(), "work needed later is left")
	})
}

// TestWorkInfo: what Work lists of a piece of work.
func TestWorkInfo(t *testing.T) {
	t.Parallel()
	w := &work{kind: WorkProbe, id: "", started: t0}
	assert.Equal(t, sim.Work{Kind: WorkProbe, StartedAt: t0}, w.info(), "no URL or state yet")
	w.setURL("https://v/a")
	w.set(waitHost)
	w.bytes.Add(42)
	assert.Equal(t, sim.Work{Kind: WorkProbe, URL: "https://v/a", StartedAt: t0, WaitingFor: waitHost, Bytes: 42}, w.info())

	h := newArtHarness(t, artOptions{})
	assert.Empty(t, h.e.Clock.Work(), "nothing in flight")
	assert.Nil(t, h.e.Artifacts.work.waitFor(context.Background(), t0.Add(time.Hour), ""))
}
