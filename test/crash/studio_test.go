package crash

// TestCrashConsistencyStudio is the crash test of the studio interface: the
// same process, kill and restart machinery as TestCrashConsistency, with a
// load of studio projects, videos and artifacts (presigned uploads, URLs,
// fragments) and their updates.
//
//	go test ./test/crash -run Studio -v                                    # 10 kills
//	DUBSIM_CRASH_STUDIO_ITERATIONS=100 go test ./test/crash -run Studio -v # more
//	DUBSIM_CRASH_SEED=1234 go test ./test/crash -run Studio -v             # same choices as a logged run
//
// The seed (logged) drives every random choice (requests, kill delays,
// samples); timing still varies from run to run. Every created resource is
// named by a unique token, also its Idempotency-Key, so that a creation
// whose answer was lost in a kill is recognised in the state.
// DUBSIM_CRASH_STUDIO_SKIP_CLOCK=1 leaves out the checks that the simulated
// clock and the timestamps it writes never go back across a restart (they
// found that studio writes did not persist the clock), to look at the
// others should those fail again.
//
// The invariants, checked after every restart with the clock frozen, on the
// studio dump (GET /_sim/studio) and through the API (see
// studioHarness.check and verify):
//
//  1. Every acknowledged creation (project, video, artifact) exists with the
//     acknowledged id and the fields sent (name, manager, glossaries;
//     project, source artifact, languages, workflow type, remark, metadata;
//     artifact type, source, upload, and its size and duration once
//     processed); every record of the test's company is one the client
//     asked for, once; a creation whose answer was lost is found by its name
//     and re-sending it with its Idempotency-Key replays it (no second
//     record), while one that did not happen runs when re-sent.
//  2. Every acknowledged PATCH is visible: each field holds its last
//     acknowledged value, or the value of the PATCH sent after it without an
//     answer (all of that PATCH's fields, or none).
//  3. Lifecycles never go back: an artifact's or a video's status never
//     returns to an earlier status than one seen (answers or dumps), a final
//     status never changes, created_at never changes, updated_at never goes
//     back and does not change at all without a write; a resource not in
//     its final status has a transition due; the simulated clock does not
//     resume before a time already answered. The API answers what the dump
//     holds.
//  4. A day later, every artifact and video has reached its final status,
//     the one its source implies (upload_completed with the uploaded size
//     and duration, upload_failed with the expected message, completed).

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/proctest"
	"github.com/stretchr/testify/require"
)

const (
	defaultStudioIterations = 10
	studioWorkers           = 8
	studioKeyCount          = 3
	// studioBudget is the number of creations of a worker in one phase
	// (spread over it, so that kills find creations in flight): the dump
	// read at every check grows with every phase.
	studioBudget       = 12
	studioAPISample    = 40 // resources read back through the API at each check
	studioReplaySample = 8  // acknowledged creations re-sent at each check
	// acmeCompanyID is Acme Media of fixtures/studio.json: it has glossaries
	// of every kind; the test's keys join it.
	acmeCompanyID = "663266da5ec2709f7826386f"
	studioTimeFmt = "2006-01-02T15:04:05.000Z"
)

func TestCrashConsistencyStudio(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs dubsim as a process and kills it repeatedly")
	}
	t.Parallel() // beside TestCrashConsistency
	iterations := envInt(t, "DUBSIM_CRASH_STUDIO_ITERATIONS", defaultStudioIterations)
	seed := uint64(time.Now().UnixNano()) & (1<<53 - 1)
	if s := os.Getenv("DUBSIM_CRASH_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "DUBSIM_CRASH_SEED")
	}
	t.Logf("seed %d (replay with DUBSIM_CRASH_SEED=%d), %d kills, %d workers, race=%t", seed, seed, iterations, studioWorkers, proctest.RaceEnabled)
	start := time.Now()
	h := &studioHarness{t: t, seed: seed, bin: dubsimBinary(t), data: filepath.Join(t.TempDir(), "dubsim.db"),
		rng: rand.New(rand.NewPCG(seed, 0x73747564)), userOfKey: map[string]string{}, userByEmail: map[string]string{},
		glossaries: map[string][]string{}, skipClock: os.Getenv("DUBSIM_CRASH_STUDIO_SKIP_CLOCK") != "",
		l: &studioLedger{byToken: map[string]*studioRes{}, byID: map[string]*studioRes{}}}
	for range studioWorkers {
		h.l.owned = append(h.l.owned, &studioOwned{})
	}
	if h.skipClock {
		t.Logf("DUBSIM_CRASH_STUDIO_SKIP_CLOCK is set: the simulated clock and updated_at are not checked across restarts")
	}
	defer func() {
		var sent, ack []string
		for i, k := range studioKinds {
			sent = append(sent, fmt.Sprintf("%d %ss", h.st.creates[i].Load(), k))
			ack = append(ack, fmt.Sprint(h.st.createAcked[i].Load()))
		}
		t.Logf("seed %d: %d kills survived, %d phases of load, %d requests sent; creations sent: %s (acknowledged %s); "+
			"%d uploads, %d PATCHes sent (%d acknowledged), %d gets; %d requests unanswered at a kill: %d creations committed without an answer, "+
			"%d not committed (re-sent), %d unanswered PATCHes resolved (%d not applied); %d idempotent replays; %d state checks, %d invariant assertions passed; %s",
			seed, h.kills, h.phases, h.st.requests.Load(), strings.Join(sent, ", "), strings.Join(ack, "/"),
			h.st.uploads.Load(), h.st.patches.Load(), h.st.patchAcked.Load(), h.st.gets.Load(), h.st.unknown.Load(), h.committedUnacked,
			h.absentUnacked, h.patchesResolved, h.patchesUnapplied, h.st.replays.Load(), h.checks, h.passed, time.Since(start).Round(time.Millisecond))
	}()

	p := startProc(t, h.bin, h.data, seed)
	h.setup(p)
	h.check(p, "initial state", false)
	if t.Failed() {
		return
	}
	for i := 1; i <= iterations; i++ {
		h.load(p, fmt.Sprintf("kill %d", i), stopKill)
		p = startProc(t, h.bin, h.data, seed)
		h.check(p, fmt.Sprintf("restart after kill %d", i), true)
		if t.Failed() {
			return
		}
		h.kills++
	}

	// A graceful stop under load, then the same checks.
	h.load(p, "SIGTERM", stopTerm)
	p = startProc(t, h.bin, h.data, seed)
	h.check(p, "restart after SIGTERM", true)
	if t.Failed() {
		return
	}

	// A day later, everything has reached its final status.
	cl := newClient(p.base)
	defer cl.close()
	v := &violations{label: fmt.Sprintf("seed %d, a day later", seed)}
	require.NoError(t, cl.control(http.MethodPost, "/_sim/clock/freeze", nil, nil, http.StatusOK))
	var clk struct {
		Now string `json:"now"`
	}
	require.NoError(t, cl.control(http.MethodPost, "/_sim/clock/advance", map[string]any{"seconds": 86400}, &clk, http.StatusOK))
	d := h.dump(cl)
	h.verify(v, d, clk.Now)
	h.settled(v, d)
	h.report(v)
	p.terminate(t)
	p.checkStderr(t, "final")
}

func (h *studioHarness) keyOf(w int) string { return h.keys[w%len(h.keys)] }

// setup creates the test's keys in the Acme company and reads its users
// (managers) and glossaries.
func (h *studioHarness) setup(p *proc) {
	t := h.t
	cl := newClient(p.base)
	defer cl.close()
	for i := range studioKeyCount {
		var out struct {
			APIKey string `json:"api_key"`
			UserID string `json:"user_id"`
		}
		require.NoError(t, cl.control(http.MethodPost, "/_sim/accounts", map[string]any{
			"name": fmt.Sprintf("crash studio %d", i), "plan": "enterprise", "balance_minutes": 1000,
			"company_id": acmeCompanyID, "user_email": fmt.Sprintf("crash-studio-%d@acme-media.example", i),
		}, &out, http.StatusCreated))
		require.NotEmpty(t, out.UserID)
		h.keys = append(h.keys, out.APIKey)
		h.userOfKey[out.APIKey] = out.UserID
	}
	d := h.dump(cl)
	for _, u := range d.Users {
		if u.CompanyID == acmeCompanyID {
			h.emails = append(h.emails, u.Email)
			h.userByEmail[u.Email] = u.ID
		}
	}
	for _, g := range d.Glossaries {
		for f, kind := range glossaryFields {
			if g.Kind == kind && g.CompanyID == acmeCompanyID {
				h.glossaries[f] = append(h.glossaries[f], g.ID)
			}
		}
	}
	require.GreaterOrEqual(t, len(h.emails), studioKeyCount+1, "users of company %s", acmeCompanyID)
	for f := range glossaryFields {
		require.NotEmpty(t, h.glossaries[f], "company %s has no glossary for %s (fixtures/studio.json)", acmeCompanyID, f)
		sort.Strings(h.glossaries[f])
	}
}

func (h *studioHarness) dump(cl *client) *studioDump {
	var d studioDump
	require.NoError(h.t, cl.control(http.MethodGet, "/_sim/studio?company_id="+acmeCompanyID, nil, &d, http.StatusOK))
	return &d
}
