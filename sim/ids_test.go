package sim_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlatformProjectIDFormatAndUniqueness(t *testing.T) {
	t.Parallel()
	for _, seed := range []uint64{0, 1, 0xDEADBEEF, math.MaxUint64} {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			t.Parallel()
			g := sim.NewIDs(seed)
			assert.Equal(t, seed, g.Seed())
			const n = 200_000
			seen := make(map[string]uint64, n+1)
			for seq := uint64(0); seq <= n; seq++ {
				id := g.PlatformProjectID(seq)
				// Plain checks: testify in a 200k-iteration loop is slow under -race.
				if v, err := strconv.ParseUint(id, 10, 64); len(id) != 9 || err != nil || v < 100_000_000 || v > 999_999_999 {
					t.Fatalf("seq %d: id %q is not a 9-digit number in [100000000, 999999999]", seq, id)
				}
				if prev, dup := seen[id]; dup {
					t.Fatalf("seq %d and %d both give %s", prev, seq, id)
				}
				seen[id] = seq
			}
			// The ids look unordered: they are not the sequence in disguise.
			first := make([]string, 100)
			for i := range first {
				first[i] = g.PlatformProjectID(uint64(i))
			}
			assert.False(t, slices.IsSorted(first), "ids follow the sequence order")
		})
	}
}

func TestPlatformProjectIDEdgesOfRange(t *testing.T) {
	t.Parallel()
	g := sim.NewIDs(7)
	// The last sequence numbers of the documented domain still give valid,
	// distinct ids (cycle walking keeps the permutation inside the range).
	seen := map[string]bool{}
	for seq := uint64(900_000_000 - 1000); seq < 900_000_000; seq++ {
		id := g.PlatformProjectID(seq)
		v, err := strconv.ParseUint(id, 10, 64)
		require.NoError(t, err)
		require.True(t, v >= 100_000_000 && v <= 999_999_999, "seq %d: %s", seq, id)
		require.False(t, seen[id], "seq %d: duplicate %s", seq, id)
		seen[id] = true
	}
}

func TestPlatformProjectSeqInvertsID(t *testing.T) {
	t.Parallel()
	for _, seed := range []uint64{0, 1, 0xDEADBEEF, math.MaxUint64} {
		g := sim.NewIDs(seed)
		seqs := []uint64{0, 1, 2, 99_999, 123_456_789, 900_000_000 - 1}
		for s := uint64(0); s < 20_000; s++ {
			seqs = append(seqs, s)
		}
		for _, seq := range seqs {
			id := g.PlatformProjectID(seq)
			got, ok := g.PlatformProjectSeq(id)
			if !ok || got != seq {
				t.Fatalf("seed %d: PlatformProjectSeq(%s) = %d, %v; want %d", seed, id, got, ok, seq)
			}
		}
	}
	// Every nine-digit id has a sequence number under any seed, and it maps
	// back to that id: the permutation is a bijection of the range.
	g := sim.NewIDs(5)
	for _, id := range []string{"100000000", "999999999", "500000000", "123456789"} {
		seq, ok := g.PlatformProjectSeq(id)
		require.True(t, ok, id)
		require.Less(t, seq, uint64(900_000_000), id)
		assert.Equal(t, id, g.PlatformProjectID(seq))
	}
}

func TestPlatformProjectSeqRefusesOtherStrings(t *testing.T) {
	t.Parallel()
	g := sim.NewIDs(0)
	for _, id := range []string{"", "1", "12345678", "1234567890", "012345678", "12345678a", " 12345678", "-12345678", "+12345678", "１23456789"} {
		_, ok := g.PlatformProjectSeq(id)
		assert.False(t, ok, "%q", id)
	}
}

func FuzzPlatformProjectSeq(f *testing.F) {
	f.Add(uint64(0), "100000000")
	f.Add(uint64(7), "999999999")
	f.Add(uint64(1), "12x")
	f.Fuzz(func(t *testing.T, seed uint64, id string) {
		g := sim.NewIDs(seed)
		seq, ok := g.PlatformProjectSeq(id)
		if !ok {
			return
		}
		if back := g.PlatformProjectID(seq); back != id {
			t.Fatalf("seed %d: %q -> %d -> %q", seed, id, seq, back)
		}
	})
}

func TestPlatformProjectIDSeeds(t *testing.T) {
	t.Parallel()
	const n = 2000
	seq := func(seed uint64) []string {
		g := sim.NewIDs(seed)
		out := make([]string, n)
		for i := range out {
			out[i] = g.PlatformProjectID(uint64(i))
		}
		return out
	}
	t.Run("same seed same ids", func(t *testing.T) {
		t.Parallel()
		assert.Equal(t, seq(42), seq(42))
	})
	t.Run("different seeds different ids", func(t *testing.T) {
		t.Parallel()
		for _, pair := range [][2]uint64{{1, 2}, {0, 1}, {1, 1 << 32}, {1 << 63, 1<<63 | 1}} {
			a, b := seq(pair[0]), seq(pair[1])
			same := 0
			for i := range a {
				if a[i] == b[i] {
					same++
				}
			}
			// Two unrelated permutations of 900M values agree by chance on
			// about n/9e8 positions: a handful at most.
			assert.LessOrEqual(t, same, 2, "seeds %d and %d agree on %d of %d ids", pair[0], pair[1], same, n)
		}
	})
}

func TestHash(t *testing.T) {
	t.Parallel()
	g1, g1b, g2 := sim.NewIDs(1), sim.NewIDs(1), sim.NewIDs(2)
	cases := []struct {
		name  string
		a, b  uint64
		equal bool
	}{
		{"deterministic", g1.Hash("project", "123"), g1b.Hash("project", "123"), true},
		{"no parts deterministic", g1.Hash(), g1b.Hash(), true},
		{"seed-dependent", g1.Hash("project", "123"), g2.Hash("project", "123"), false},
		{"seed-dependent without parts", g1.Hash(), g2.Hash(), false},
		{"part-dependent", g1.Hash("project", "123"), g1.Hash("project", "124"), false},
		{"order-dependent", g1.Hash("a", "b"), g1.Hash("b", "a"), false},
		{"part boundaries count", g1.Hash("ab", "c"), g1.Hash("a", "bc"), false},
		{"empty part counts", g1.Hash("a"), g1.Hash("a", ""), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.equal {
				assert.Equal(t, tc.a, tc.b)
			} else {
				assert.NotEqual(t, tc.a, tc.b)
			}
		})
	}
}

func TestToken(t *testing.T) {
	t.Parallel()
	g1, g2 := sim.NewIDs(1), sim.NewIDs(2)
	for _, n := range []int{0, 1, 7, 8, 9, 16, 33} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			t.Parallel()
			tok := g1.Token(n, "media", "x")
			assert.Len(t, tok, 2*n, "n bytes as hex")
			raw, err := hex.DecodeString(tok)
			require.NoError(t, err)
			assert.Len(t, raw, n)
			assert.Equal(t, tok, sim.NewIDs(1).Token(n, "media", "x"), "deterministic")
			if n > 0 {
				assert.NotEqual(t, tok, g2.Token(n, "media", "x"), "seed-dependent")
				assert.NotEqual(t, tok, g1.Token(n, "media", "y"), "part-dependent")
			}
		})
	}
	// Longer tokens are not one 8-byte block repeated.
	long := g1.Token(32, "k")
	assert.NotEqual(t, long[:16], long[16:32])
}

// TestSecretToken: the token has Token's shape, is a function of the secret
// and the parts, and is the HMAC-SHA256 of the length-prefixed parts (so
// parts cannot be shifted into each other).
func TestSecretToken(t *testing.T) {
	t.Parallel()
	k1, k2 := []byte("secret one, 32 bytes long ......"), []byte("secret two, 32 bytes long ......")
	for _, n := range []int{0, 1, 16, 32, 33, 70} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			t.Parallel()
			tok := sim.SecretToken(k1, n, "presign", "x")
			assert.Regexp(t, `^[0-9a-f]*$`, tok)
			assert.Len(t, tok, 2*n, "n bytes as hex")
			assert.Equal(t, tok, sim.SecretToken(k1, n, "presign", "x"), "deterministic")
			if n > 0 {
				assert.NotEqual(t, tok, sim.SecretToken(k2, n, "presign", "x"), "secret-dependent")
				assert.NotEqual(t, tok, sim.SecretToken(k1, n, "presign", "y"), "part-dependent")
				assert.NotEqual(t, tok, sim.SecretToken(k1, n, "presig", "nx"), "parts are delimited")
				assert.NotEqual(t, tok, sim.NewIDs(0).Token(n, "presign", "x"), "not the seeded token")
			}
		})
	}
	long := sim.SecretToken(k1, 64, "k")
	assert.NotEqual(t, long[:64], long[64:], "counter blocks differ")

	// The first block is HMAC-SHA256(secret, be64(0) || be64(len) || part ...).
	m := hmac.New(sha256.New, k1)
	m.Write([]byte{0, 0, 0, 0, 0, 0, 0, 0})
	m.Write([]byte{0, 0, 0, 0, 0, 0, 0, 1})
	m.Write([]byte("k"))
	assert.Equal(t, hex.EncodeToString(m.Sum(nil)), long[:64])
}

func TestRandRange(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		lo, hi int64
	}{
		{"single value", 5, 5},
		{"zero", 0, 0},
		{"two values", 0, 1},
		{"small", 100, 900},
		{"negative", -10, 10},
		{"all negative", -20, -10},
		{"huge", math.MinInt64 / 2, math.MaxInt64 / 2},
		{"whole int64", math.MinInt64, math.MaxInt64},
		{"top of int64", math.MaxInt64 - 3, math.MaxInt64},
		{"bottom of int64", math.MinInt64, math.MinInt64 + 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := sim.NewRand(uint64(tc.lo) ^ 99)
			seen := map[int64]bool{}
			for range 2000 {
				v := r.Range(tc.lo, tc.hi)
				require.GreaterOrEqual(t, v, tc.lo)
				require.LessOrEqual(t, v, tc.hi)
				seen[v] = true
			}
			if span := uint64(tc.hi - tc.lo); span < 32 {
				// Small ranges: every value, both ends included, comes up.
				assert.Len(t, seen, int(span)+1)
			} else {
				assert.Greater(t, len(seen), int(min(span/2, 1000)), "values spread over the range")
			}
		})
	}
	t.Run("hi below lo gives lo", func(t *testing.T) {
		t.Parallel()
		r := sim.NewRand(1)
		for range 10 {
			assert.Equal(t, int64(7), r.Range(7, 3))
		}
	})
}

func TestRandDeterminism(t *testing.T) {
	t.Parallel()
	draw := func(r *sim.Rand) []uint64 {
		out := make([]uint64, 50)
		for i := range out {
			out[i] = r.Uint64()
		}
		return out
	}
	assert.Equal(t, draw(sim.NewRand(3)), draw(sim.NewRand(3)), "same seed, same values")
	assert.NotEqual(t, draw(sim.NewRand(3)), draw(sim.NewRand(4)), "another seed, other values")

	r := sim.NewRand(11)
	r.Uint64()
	cp := *r // a copy continues the same sequence
	assert.Equal(t, draw(r), draw(&cp))

	r = sim.NewRand(5)
	for range 1000 {
		n := r.Intn(7)
		require.True(t, n >= 0 && n < 7, "Intn %d", n)
	}
}
