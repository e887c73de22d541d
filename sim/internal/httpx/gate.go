package httpx

import "context"

// Gate lets at most its size of something run at once (the dumps of the
// control API): the others wait for a place, each as long as its context
// lasts.
type Gate struct{ places chan struct{} }

// NewGate returns a gate of n places.
func NewGate(n int) *Gate { return &Gate{places: make(chan struct{}, n)} }

// Enter waits for a place, or for ctx to end (its error is returned).
func (g *Gate) Enter(ctx context.Context) error {
	select {
	case g.places <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Leave gives back the place Enter took.
func (g *Gate) Leave() { <-g.places }
