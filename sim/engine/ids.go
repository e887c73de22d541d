package engine

import (
	"fmt"
	"time"

	"github.com/dubsim/dubsim/sim"
)

// idgen makes the identifiers and tokens of the services that create
// records.
type idgen struct {
	seed   *sim.IDs // content derived from the public seed
	keys   *sim.IDs // identifiers, keyed by sim.Store.IDKey
	secret []byte   // sim.Store.Secret: keys whatever grants access
}

func newIDGen(st sim.Store, seed *sim.IDs) *idgen {
	g := &idgen{seed: seed}
	if g.seed == nil {
		g.seed = sim.NewIDs(0)
	}
	g.keys = g.seed
	if st != nil {
		g.secret = st.Secret()
		g.keys = sim.NewIDs(st.IDKey())
	}
	return g
}

const seqStudio = "studio"

// studioID returns a new 24-hex identifier built like a MongoDB ObjectId:
// the creation second, a seeded "process" token, then a counter. Ids made
// in the same second follow each other, so the B+tree takes a creation at
// its end rather than at a random place.
func (g *idgen) studioID(tx sim.Tx, now time.Time) (string, error) {
	seq, err := tx.NextSequence(seqStudio)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%08x%s%08x", uint32(now.Unix()), g.keys.Token(4, "studio process"), uint32(seq+g.keys.Hash("studio counter"))), nil
}

func (g *idgen) secretToken(n int, parts ...string) string {
	return sim.SecretToken(g.secret, n, parts...)
}

// uuid formats a secretToken as a version-4 UUID, for ids worth guessing
// (uploads).
func (g *idgen) uuid(parts ...string) string {
	h := []byte(g.secretToken(16, parts...))
	h[12] = '4'
	h[16] = "89ab"[h[16]%4]
	return string(h[0:8]) + "-" + string(h[8:12]) + "-" + string(h[12:16]) + "-" + string(h[16:20]) + "-" + string(h[20:32])
}
