package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fill sets every field of v (recursively: nested structs, pointers and two
// elements per slice) to a distinct non-zero value, so that a field the
// codec forgets comes back zero and the round trip differs.
func fill(t testing.TB, v reflect.Value, n *int) {
	t.Helper()
	*n++
	switch v.Kind() {
	case reflect.String:
		v.SetString("s" + string(rune('a'+*n%26)) + time.Duration(*n).String())
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n) * 1_000_003 * int64(1-2*(*n%2))) // both signs
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			zone := time.UTC // the simulated clock's times
			if h := *n % 5; h != 0 {
				zone = time.FixedZone("", h*3600) // the offset is kept too
			}
			v.Set(reflect.ValueOf(time.Date(2025, 3, 1+*n%27, 12, *n%60, 7, *n*1000+1, zone)))
			return
		}
		for i := range v.NumField() {
			fill(t, v.Field(i), n)
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(t, v.Index(i), n)
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), n)
	default:
		t.Fatalf("fill: %s (%s) is not handled: teach codec.go and this test the new kind", v.Type(), v.Kind())
	}
}

func filled[T any](t testing.TB) T {
	var v T
	n := 0
	fill(t, reflect.ValueOf(&v).Elem(), &n)
	return v
}

// roundTrip encodes v (which must take the binary form) and decodes it.
func roundTrip[T any](t *testing.T, v T) T {
	t.Helper()
	b, err := encode(&v)
	require.NoError(t, err)
	require.Equal(t, byte(binTag), b[0], "binary form")
	var got T
	require.NoError(t, decode(b, &got))
	return got
}

func TestCodecCoversEveryField(t *testing.T) {
	t.Run("project", func(t *testing.T) {
		p := filled[sim.Project](t)
		got := roundTrip(t, p)
		require.Equal(t, p, got)
		// Times keep their instant and their offset.
		assert.True(t, p.CreatedAt.Equal(got.CreatedAt))
		_, off := got.DueAt.Zone()
		_, want := p.DueAt.Zone()
		assert.Equal(t, want, off)
	})
	t.Run("body", func(t *testing.T) {
		b := filled[projectBody](t)
		require.Equal(t, b, roundTrip(t, b))
	})
	t.Run("account", func(t *testing.T) {
		a := filled[sim.Account](t)
		require.Equal(t, a, roundTrip(t, a))
	})
}

// Nil and empty slices, nil pointers and zero times come back as they were
// (JSON tells null from [] and the views rely on it).
func TestCodecKeepsNilEmptyAndZero(t *testing.T) {
	p := sim.Project{ID: "p", SourceScript: []sim.Segment{}, Speakers: nil, History: []sim.Event{{Kind: "created"}}}
	got := roundTrip(t, p)
	require.Equal(t, p, got)
	assert.NotNil(t, got.SourceScript)
	assert.Nil(t, got.TargetScript)
	assert.Nil(t, got.Pending)
	assert.True(t, got.DueAt.IsZero())

	a := sim.Account{APIKey: "k", Storage: &sim.StorageCredentials{AccessKeyID: "id", Buckets: []string{}}}
	ga := roundTrip(t, a)
	require.Equal(t, a, ga)
	assert.Nil(t, ga.RateLimit)
}

// A record of a binary type in JSON (the form of store schemas before 4)
// is refused as corrupt, never read.
func TestCodecRefusesJSONRecords(t *testing.T) {
	for _, v := range []any{filled[sim.Project](t), filled[projectBody](t), filled[sim.Account](t)} {
		raw, err := json.Marshal(envelope{V: valueVersion, D: v})
		require.NoError(t, err)
		into := reflect.New(reflect.TypeOf(v)).Interface()
		err = decode(raw, into)
		require.ErrorIs(t, err, errCorrupt, "%T", v)
		assert.ErrorIs(t, err, sim.ErrDamaged)
		assert.Contains(t, err.Error(), "not a binary record")
	}
}

func TestCodecRefusesDamage(t *testing.T) {
	p := filled[sim.Project](t)
	good, err := encode(&p)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"tag only", []byte{binTag}},
		{"truncated", good[:len(good)/2]},
		{"one byte short", good[:len(good)-1]},
		{"trailing byte", append(append([]byte(nil), good...), 0)},
		{"huge string length", []byte{binTag, 0xff, 0xff, 0xff, 0xff, 0x0f}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p sim.Project
			err := decode(tc.b, &p)
			require.Error(t, err)
			assert.True(t, errors.Is(err, errCorrupt), "%v", err)
		})
	}
	// A binary record of one kind read as a kind that is stored as JSON.
	var rec sim.IdemRecord
	require.ErrorIs(t, decode(good, &rec), errCorrupt)
	// A bad boolean byte.
	acct, _ := encode(&sim.Account{APIKey: "k"})
	bad := append([]byte(nil), acct...)
	bad[len(bad)-1] = 7 // the rate limit's presence byte
	var a sim.Account
	require.ErrorIs(t, decode(bad, &a), errCorrupt)
}

// A slice count larger than the bytes left is refused before allocating.
func TestCodecCountBeyondRecord(t *testing.T) {
	w := codec{b: []byte{binTag, 1}} // a script input is present
	n := uint64(1 << 40)
	w.uint(&n) // its source script's count
	var b projectBody
	require.ErrorIs(t, decode(w.b, &b), errCorrupt)
}

// FuzzDecodeRecord feeds arbitrary bytes to the binary decoder of each
// kind: no panic, and whatever decodes re-encodes to a record that decodes
// to the same value (one that encodes to the same bytes).
func FuzzDecodeRecord(f *testing.F) {
	p, body, a := filled[sim.Project](f), filled[projectBody](f), filled[sim.Account](f)
	for _, v := range []any{&p, &body, &a, &sim.Project{}, &sim.Account{}} {
		b, _ := encode(v)
		f.Add(b[1:])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b := append([]byte{binTag}, data...)
		check := func(v, again any) {
			if err := decode(b, v); err != nil {
				if !errors.Is(err, errCorrupt) {
					t.Fatalf("error not marked corrupt: %v", err)
				}
				return
			}
			enc, err := encode(v)
			if err != nil {
				t.Fatal(err)
			}
			if err := decode(enc, again); err != nil {
				t.Fatalf("re-encoded record does not decode: %v", err)
			}
			// Equal encodings, not reflect.DeepEqual: a time with an offset
			// that is no zone of this machine decodes to a new FixedZone
			// each time, equal in value but not in pointer (found by this
			// fuzz target, testdata/fuzz/FuzzDecodeRecord/1ba1888bc8217e69).
			enc2, err := encode(again)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(enc, enc2) {
				t.Fatalf("round trip changed the value:\n%#v\n%#v", reflect.ValueOf(v).Elem().Interface(), reflect.ValueOf(again).Elem().Interface())
			}
		}
		check(new(sim.Project), new(sim.Project))
		check(new(projectBody), new(projectBody))
		check(new(sim.Account), new(sim.Account))
	})
}
