package server_test

// Parallel studio creations that share an Idempotency-Key.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stHeldBurst sends n requests at once while the writer of the instance's
// store is held, so that the one request that takes the Idempotency-Key
// cannot finish before every other one has answered; then it releases the
// writer. It returns the n-1 answers given while the writer was held, and
// the last answer and the index of its request.
func stHeldBurst(t *testing.T, in *inst, db sim.Store, n int, req func(i int, c *pclient) answer) ([]answer, answer, int) {
	t.Helper()
	clients := make([]*pclient, n)
	for i := range clients {
		clients[i] = newPClient(t, in.url)
	}
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	releaseOnce := func() { once.Do(func() { close(release) }) }
	defer releaseOnce()
	go func() {
		_ = db.Update(t.Context(), func(sim.Tx) error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	type result struct {
		i int
		a answer
	}
	results := make(chan result, n)
	for i := range n {
		go func() { results <- result{i, req(i, clients[i])} }()
	}
	var early []answer
	timeout := time.After(time.Minute)
	for len(early) < n-1 {
		select {
		case r := <-results:
			early = append(early, r.a)
		case <-timeout:
			releaseOnce()
			t.Fatalf("only %d of %d requests answered while the store's writer was held", len(early), n-1)
		}
	}
	releaseOnce()
	last := <-results
	return early, last.a, last.i
}

// TestConcurrentStudioIdempotentCreations: for each studio creation
// (artifact, project, video), 100 clients send the same request with the
// same Idempotency-Key at once: one runs, the others get its answer
// (replayed) or 409 while it runs; then the key with another body is
// refused with 422. And 100 clients send 100 different bodies with one key:
// exactly one runs. Each creates exactly one record. Both are run twice:
// as they come, and with the store's writer held so that the one request
// that runs is in flight while all the others arrive (each of them gets the
// 409).
func TestConcurrentStudioIdempotentCreations(t *testing.T) {
	t.Parallel()
	var db sim.Store
	in, g, logs := guarded(t, func(c *app.Config) { db = c.Store })
	key := newAccount(t, in, `{"plan":"pro","balance_minutes":10}`) // a company of its own: every record is the test's
	st, src := in.call("POST", "/api/v1/artifacts/create", key, `{"name":"Source","type":"video","url":"https://cdn.test/idem/source.mp4"}`)
	require.Equal(t, http.StatusOK, st, "%v", src)
	co, srcID := stCompanyOf(src), stStr(src, "id")
	st, m := in.call("POST", "/_sim/artifacts/"+srcID+"/outcome", "", `{"outcome":"ready","now":true}`)
	require.Equal(t, http.StatusOK, st, "%v", m)
	st, host := callWith(t, in, "POST", "/api/v1/projects", key, `{"name":"Host"}`, stStudioHeader)
	require.Equal(t, http.StatusOK, st, "%v", host)
	pid := stStr(host, "id")
	c := newPClient(t, in.url)

	// records returns the ids of the company's records of a kind, from the
	// studio dump and, when the kind has one, the list endpoint (which must
	// agree).
	records := func(t *testing.T, kind, list string) []string {
		t.Helper()
		st, d := in.call("GET", "/_sim/studio?company_id="+co, "", "")
		require.Equal(t, http.StatusOK, st, "%v", d)
		var ids []string
		for _, r := range d[kind].([]any) {
			ids = append(ids, stStr(r.(map[string]any), "id"))
		}
		slices.Sort(ids)
		if list != "" {
			a := c.json("GET", list, key, "", nil)
			l, ok := stJSONList(a)
			require.True(t, ok, "%d %s", a.status, a.body)
			var listed []string
			for _, r := range l {
				listed = append(listed, stStr(r, "id"))
			}
			slices.Sort(listed)
			assert.Equal(t, ids, listed, "the list endpoint and the dump agree")
		}
		return ids
	}
	with := func(hdr map[string]string, idem string) map[string]string {
		out := map[string]string{"Idempotency-Key": idem}
		for k, v := range hdr {
			out[k] = v
		}
		return out
	}

	for _, tc := range []struct {
		name, path string
		hdr        map[string]string
		body       func(name string) string
		kind, list string
	}{
		{"artifact", "/api/v1/artifacts/create", nil, func(name string) string {
			return stCanon(map[string]any{"name": name, "type": "video", "url": "https://cdn.test/idem/clip.mp4"})
		}, "artifacts", ""},
		{"project", "/api/v1/projects", stStudioHeader, func(name string) string {
			return stCanon(map[string]any{"name": name})
		}, "projects", "/api/v1/projects"},
		{"video", "/api/v1/projects/" + pid + "/videos/create", nil, func(name string) string {
			return stCanon(map[string]any{"name": name, "workflowType": "dubbing", "sourceArtifactId": srcID, "sourceLanguage": "en", "targetLanguages": []string{"es-ES"}})
		}, "videos", "/api/v1/projects/" + pid + "/videos"},
	} {
		t.Run(tc.name+" same request", func(t *testing.T) {
			idem := "same-" + tc.name
			hdr := with(tc.hdr, idem)
			body := tc.body("Same " + tc.name)
			before := records(t, tc.kind, tc.list)
			answers := parallelSame(t, in, parallelClients, func(_ int, c *pclient) answer {
				return c.json("POST", tc.path, key, body, hdr)
			})
			var first []byte
			counts := map[int]int{}
			ran := 0
			for _, a := range answers {
				require.NoError(t, a.err)
				counts[a.status]++
				switch a.status {
				case http.StatusOK:
					if first == nil {
						first = a.body
					}
					assert.Equal(t, string(first), string(a.body), "every 200 is the answer of the request that ran")
					if a.header.Get("Idempotent-Replayed") == "" {
						ran++
					} else {
						assert.Equal(t, "true", a.header.Get("Idempotent-Replayed"))
					}
				case http.StatusConflict:
					assert.Empty(t, stRefusal(a, http.StatusConflict, fmt.Sprintf(sim.MsgIdempotencyInFlight, idem)))
				default:
					t.Errorf("status %d: %s", a.status, a.body)
				}
			}
			t.Logf("answers by status: %s", formatCounts(counts))
			require.NotNil(t, first, "one request ran")
			assert.Equal(t, 1, ran, "exactly one answer is not a replay")
			var created map[string]any
			require.NoError(t, json.Unmarshal(first, &created))
			id := stStr(created, "id")
			require.True(t, sim.IsStudioID(id), "%s", first)
			assert.Equal(t, "Same "+tc.name, created["name"])

			after := records(t, tc.kind, tc.list)
			assert.Equal(t, stSorted(append(slices.Clone(before), id)), after, "exactly one record more: the acknowledged one")

			again := c.json("POST", tc.path, key, body, hdr)
			assert.Equal(t, http.StatusOK, again.status)
			assert.Equal(t, string(first), string(again.body), "a later retry gets the same answer")
			assert.Equal(t, "true", again.header.Get("Idempotent-Replayed"))

			other := c.json("POST", tc.path, key, tc.body("Other "+tc.name), hdr)
			assert.Empty(t, stRefusal(other, http.StatusUnprocessableEntity, fmt.Sprintf(sim.MsgIdempotencyMismatch, idem)), "the key with another body")
			assert.Equal(t, after, records(t, tc.kind, tc.list), "no record more")
		})

		t.Run(tc.name+" different bodies", func(t *testing.T) {
			idem := "different-" + tc.name
			hdr := with(tc.hdr, idem)
			before := records(t, tc.kind, tc.list)
			answers := parallelSame(t, in, parallelClients, func(i int, c *pclient) answer {
				return c.json("POST", tc.path, key, tc.body(fmt.Sprintf("Body %d", i)), hdr)
			})
			counts := map[int]int{}
			winner := -1
			var id string
			for i, a := range answers {
				require.NoError(t, a.err)
				counts[a.status]++
				switch a.status {
				case http.StatusOK:
					winner = i
					id = stStr(a.json(), "id")
					assert.Empty(t, a.header.Get("Idempotent-Replayed"))
				case http.StatusConflict:
					assert.Empty(t, stRefusal(a, http.StatusConflict, fmt.Sprintf(sim.MsgIdempotencyInFlight, idem)))
				case http.StatusUnprocessableEntity:
					assert.Empty(t, stRefusal(a, http.StatusUnprocessableEntity, fmt.Sprintf(sim.MsgIdempotencyMismatch, idem)))
				default:
					t.Errorf("status %d: %s", a.status, a.body)
				}
			}
			t.Logf("answers by status: %s", formatCounts(counts))
			assert.Equal(t, 1, counts[http.StatusOK], "exactly one 200")
			assert.Equal(t, parallelClients-1, counts[http.StatusConflict]+counts[http.StatusUnprocessableEntity], "every other one refused")
			require.GreaterOrEqual(t, winner, 0)
			after := records(t, tc.kind, tc.list)
			assert.Equal(t, stSorted(append(slices.Clone(before), id)), after, "exactly one record more: the acknowledged one")
			st, d := in.call("GET", "/_sim/studio?company_id="+co, "", "")
			require.Equal(t, http.StatusOK, st)
			for _, r := range d[tc.kind].([]any) {
				if rm := r.(map[string]any); rm["id"] == id {
					assert.Equal(t, fmt.Sprintf("Body %d", winner), rm["name"], "the record of the request that got the 200")
				}
			}
		})

		t.Run(tc.name+" same request, one held in flight", func(t *testing.T) {
			idem := "held-same-" + tc.name
			hdr := with(tc.hdr, idem)
			body := tc.body("Held " + tc.name)
			before := records(t, tc.kind, tc.list)
			early, ran, _ := stHeldBurst(t, in, db, parallelClients, func(_ int, c *pclient) answer {
				return c.json("POST", tc.path, key, body, hdr)
			})
			for _, a := range early {
				require.NoError(t, a.err)
				assert.Empty(t, stRefusal(a, http.StatusConflict, fmt.Sprintf(sim.MsgIdempotencyInFlight, idem)), "while the first request runs")
			}
			require.NoError(t, ran.err)
			require.Equal(t, http.StatusOK, ran.status, "%s", ran.body)
			assert.Empty(t, ran.header.Get("Idempotent-Replayed"))
			id := stStr(ran.json(), "id")
			assert.Equal(t, stSorted(append(slices.Clone(before), id)), records(t, tc.kind, tc.list), "exactly one record more: the acknowledged one")

			again := parallelSame(t, in, parallelClients, func(_ int, c *pclient) answer {
				return c.json("POST", tc.path, key, body, hdr)
			})
			for _, a := range again {
				require.NoError(t, a.err)
				assert.Equal(t, http.StatusOK, a.status)
				assert.Equal(t, string(ran.body), string(a.body), "the answer of the request that ran")
				assert.Equal(t, "true", a.header.Get("Idempotent-Replayed"))
			}
			assert.Equal(t, stSorted(append(slices.Clone(before), id)), records(t, tc.kind, tc.list), "no record more")
		})

		t.Run(tc.name+" different bodies, one held in flight", func(t *testing.T) {
			idem := "held-different-" + tc.name
			hdr := with(tc.hdr, idem)
			before := records(t, tc.kind, tc.list)
			early, ran, winner := stHeldBurst(t, in, db, parallelClients, func(i int, c *pclient) answer {
				return c.json("POST", tc.path, key, tc.body(fmt.Sprintf("Held body %d", i)), hdr)
			})
			for _, a := range early {
				require.NoError(t, a.err)
				assert.Empty(t, stRefusal(a, http.StatusConflict, fmt.Sprintf(sim.MsgIdempotencyInFlight, idem)), "while the first request runs")
			}
			require.NoError(t, ran.err)
			require.Equal(t, http.StatusOK, ran.status, "%s", ran.body)
			created := ran.json()
			assert.Equal(t, fmt.Sprintf("Held body %d", winner), created["name"], "the request that ran")
			id := stStr(created, "id")

			late := parallelSame(t, in, parallelClients, func(i int, c *pclient) answer {
				return c.json("POST", tc.path, key, tc.body(fmt.Sprintf("Late body %d", i)), hdr)
			})
			for _, a := range late {
				require.NoError(t, a.err)
				assert.Empty(t, stRefusal(a, http.StatusUnprocessableEntity, fmt.Sprintf(sim.MsgIdempotencyMismatch, idem)), "after the first request")
			}
			assert.Equal(t, stSorted(append(slices.Clone(before), id)), records(t, tc.kind, tc.list), "exactly one record more: the acknowledged one")
		})
	}
	assert.Zero(t, g.panicCount())
	assert.Empty(t, g.fivexx())
	assert.Empty(t, logs.records())
}

func stSorted(s []string) []string { slices.Sort(s); return s }
