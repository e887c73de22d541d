package sim

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"
)

// IDs derives identifiers and deterministic content from a seed.
type IDs struct {
	seed uint64
}

// NewIDs returns a generator for seed.
func NewIDs(seed uint64) *IDs { return &IDs{seed: seed} }

// Seed returns the generator's seed.
func (g *IDs) Seed() uint64 { return g.seed }

// Hash is a deterministic 64-bit hash of the seed and parts.
func (g *IDs) Hash(parts ...string) uint64 {
	h := sha256.New()
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], g.seed)
	h.Write(b[:])
	for _, p := range parts {
		binary.BigEndian.PutUint64(b[:], uint64(len(p)))
		h.Write(b[:])
		h.Write([]byte(p))
	}
	return binary.BigEndian.Uint64(h.Sum(nil)[:8])
}

// Platform project ids are nine-digit strings: a keyed permutation of a
// sequence number over [100000000, 999999999], so ids are unique while the
// sequence is, look unordered, and depend on the seed.
const (
	platformIDMin   = 100_000_000
	platformIDRange = 900_000_000
	feistelBits     = 30 // 2^30 > platformIDRange; cycle-walk the excess
	feistelHalf     = feistelBits / 2
	feistelMask     = 1<<feistelHalf - 1
)

// PlatformProjectID maps sequence number seq (0 <= seq < 900,000,000) to a
// project id.
func (g *IDs) PlatformProjectID(seq uint64) string {
	x := seq % platformIDRange
	for {
		x = g.feistel(x)
		if x < platformIDRange {
			return strconv.FormatUint(x+platformIDMin, 10)
		}
	}
}

// PlatformProjectSeq is the inverse of PlatformProjectID, for any nine-digit
// id in the range (the permutation is a bijection).
func (g *IDs) PlatformProjectSeq(id string) (uint64, bool) {
	y, err := strconv.ParseUint(id, 10, 64)
	if len(id) != 9 || id[0] == '0' || err != nil {
		return 0, false
	}
	y -= platformIDMin
	for {
		y = g.feistelInverse(y)
		if y < platformIDRange {
			return y, true
		}
	}
}

// feistel runs four rounds over the halves of x; feistelInverse undoes them.
func (g *IDs) feistel(x uint64) uint64 {
	l, r := (x>>feistelHalf)&feistelMask, x&feistelMask
	for round := uint64(0); round < 4; round++ {
		l, r = r, l^g.round(round, r)
	}
	return l<<feistelHalf | r
}

func (g *IDs) feistelInverse(x uint64) uint64 {
	l, r := (x>>feistelHalf)&feistelMask, x&feistelMask
	for round := uint64(4); round > 0; round-- {
		l, r = r^g.round(round-1, l), l
	}
	return l<<feistelHalf | r
}

func (g *IDs) round(round, v uint64) uint64 {
	return mix64(v*0x9E3779B97F4A7C15^g.seed^round*0xBF58476D1CE4E5B9) & feistelMask
}

// mix64 is splitmix64's finaliser.
func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

// Token is a deterministic hex token of n bytes derived from parts.
func (g *IDs) Token(n int, parts ...string) string {
	out := make([]byte, 0, n)
	for i := 0; len(out) < n; i++ {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], g.Hash(append([]string{strconv.Itoa(i)}, parts...)...))
		out = append(out, b[:]...)
	}
	return hex.EncodeToString(out[:n])
}

// SecretToken is a hex token of n bytes that only a holder of secret can
// make (HMAC-SHA256 over the length-prefixed parts, in counter mode), for
// whatever grants access: unlike Token, it cannot be derived from the seed.
func SecretToken(secret []byte, n int, parts ...string) string {
	out := make([]byte, 0, n+sha256.Size)
	var b [8]byte
	for i := uint64(0); len(out) < n; i++ {
		m := hmac.New(sha256.New, secret)
		binary.BigEndian.PutUint64(b[:], i)
		m.Write(b[:])
		for _, p := range parts {
			binary.BigEndian.PutUint64(b[:], uint64(len(p)))
			m.Write(b[:])
			m.Write([]byte(p))
		}
		out = m.Sum(out)
	}
	return hex.EncodeToString(out[:n])
}

// Rand is a small deterministic random source (splitmix64) for content
// derived from a hash.
type Rand struct{ state uint64 }

// NewRand seeds a Rand.
func NewRand(seed uint64) *Rand { return &Rand{state: seed} }

// Uint64 returns the next value.
func (r *Rand) Uint64() uint64 {
	r.state += 0x9E3779B97F4A7C15
	return mix64(r.state)
}

// Intn returns a value in [0, n); n must be > 0.
func (r *Rand) Intn(n int) int { return int(r.Uint64() % uint64(n)) }

// Range returns a value in [lo, hi].
func (r *Rand) Range(lo, hi int64) int64 {
	if hi <= lo {
		return lo
	}
	n := uint64(hi-lo) + 1
	if n == 0 { // the whole int64 range: every value is fine
		return int64(r.Uint64())
	}
	return lo + int64(r.Uint64()%n)
}
