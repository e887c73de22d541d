package httpx

import "context"

// Gate lets at most its size of something run at once (the dumps of the
// control API): the others wait for a place, each as long as its context
// lasts.
type Gate struct{ places chan struct{} }

// NewGate returns a gate of n places.
func NewGate(n int) *Gate { return &Gate{places: make(chan struct{}, n)} }

// Size is the number of places (0 for a nil gate).
func (g *Gate) Size() int {
	if g == nil {
		return 0
	}
	return cap(g.places)
}

// Enter waits for a place, or for ctx to end (its error is returned).
func (g *Gate) Enter(ctx context.Context) error {
	select {
	case g.places <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TryEnter takes a place if one is free now.
func (g *Gate) TryEnter() bool {
	select {
	case g.places <- struct{}{}:
		return true
	default:
		return false
	}
}

// Leave gives back the place Enter or TryEnter took.
func (g *Gate) Leave() { <-g.places }
