package parity_test

import (
	"bytes"
	"testing"

	"github.com/dubsim/dubsim/sim/parity"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func jsonShape(status int, fields map[string]string) parity.Shape {
	return parity.Shape{Status: status, ContentType: "application/json", Body: parity.BodyJSON, Fields: fields}
}

func TestCompareShapes(t *testing.T) {
	t.Parallel()
	project := map[string]string{"": "object", "/project_id": "string", "/cost_minutes": "integer", "/estimated_completion_date": "date-time"}
	with := func(base map[string]string, set map[string]string, del ...string) map[string]string {
		out := map[string]string{}
		for k, v := range base {
			out[k] = v
		}
		for k, v := range set {
			out[k] = v
		}
		for _, k := range del {
			delete(out, k)
		}
		return out
	}
	tests := []struct {
		name string
		was  parity.Shape
		now  parity.Shape
		want []parity.Difference
	}{
		{"same", jsonShape(200, project), jsonShape(200, project), nil},
		{"integer and number are compatible", jsonShape(200, project), jsonShape(200, with(project, map[string]string{"/cost_minutes": "number"})), nil},
		{"class sets sharing a class are compatible", jsonShape(200, with(project, map[string]string{"/cost_minutes": "null|integer"})), jsonShape(200, project), nil},
		{"renamed field: missing and extra", jsonShape(200, project),
			jsonShape(200, with(project, map[string]string{"/projectId": "string"}, "/project_id")),
			[]parity.Difference{ // in pointer order
				{Step: "s", Kind: parity.DiffExtra, Pointer: "/projectId", Now: "string"},
				{Step: "s", Kind: parity.DiffMissing, Pointer: "/project_id", Was: "string"},
			}},
		{"number where a string was", jsonShape(200, project), jsonShape(200, with(project, map[string]string{"/project_id": "integer"})),
			[]parity.Difference{{Step: "s", Kind: parity.DiffClass, Pointer: "/project_id", Was: "string", Now: "integer"}}},
		{"id format changed", jsonShape(200, map[string]string{"/id": "objectid"}), jsonShape(200, map[string]string{"/id": "uuid"}),
			[]parity.Difference{{Step: "s", Kind: parity.DiffClass, Pointer: "/id", Was: "objectid", Now: "uuid"}}},
		{"null where a string was", jsonShape(200, map[string]string{"/remark": "string"}), jsonShape(200, map[string]string{"/remark": "null"}),
			[]parity.Difference{{Step: "s", Kind: parity.DiffClass, Pointer: "/remark", Was: "string", Now: "null"}}},
		{"status differs: nothing else is compared", jsonShape(200, project), jsonShape(500, map[string]string{"": "object", "/error": "string"}),
			[]parity.Difference{{Step: "s", Kind: parity.DiffStatus, Was: "200", Now: "500"}}},
		{"media type and body kind", jsonShape(200, nil), parity.Shape{Status: 200, ContentType: "text/html", Body: parity.BodyText},
			[]parity.Difference{
				{Step: "s", Kind: parity.DiffContentType, Was: "application/json", Now: "text/html"},
				{Step: "s", Kind: parity.DiffBody, Was: "json", Now: "text"},
			}},
		{"nothing is reported beneath a missing field", jsonShape(200, map[string]string{"": "object", "/company": "object", "/company/id": "objectid", "/company/name": "string"}),
			jsonShape(200, map[string]string{"": "object"}),
			[]parity.Difference{{Step: "s", Kind: parity.DiffMissing, Pointer: "/company", Was: "object"}}},
		{"nothing is reported beneath a field of another class", jsonShape(200, map[string]string{"/g": "object", "/g/common": "string"}),
			jsonShape(200, map[string]string{"/g": "string"}),
			[]parity.Difference{{Step: "s", Kind: parity.DiffClass, Pointer: "/g", Was: "object", Now: "string"}}},
		{"a sibling sharing a prefix is still reported", jsonShape(200, map[string]string{"/a": "object", "/a/x": "string", "/ab": "string"}),
			jsonShape(200, map[string]string{}),
			[]parity.Difference{
				{Step: "s", Kind: parity.DiffMissing, Pointer: "/a", Was: "object"},
				{Step: "s", Kind: parity.DiffMissing, Pointer: "/ab", Was: "string"},
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, parity.CompareShapes("s", tc.was, tc.now))
		})
	}
}

func TestCompareRecordings(t *testing.T) {
	t.Parallel()
	step := func(name, iface, verdict string, s parity.Shape) parity.Result {
		return parity.Result{Name: name, Interface: iface, Method: "GET", Path: "/p", Shape: s, Verdict: verdict}
	}
	ok := jsonShape(200, map[string]string{"": "object"})
	tests := []struct {
		name     string
		was, now []parity.Result
		want     []string
	}{
		{"same steps", []parity.Result{step("a", "platform", "OK", ok)}, []parity.Result{step("a", "platform", "OK", ok)}, nil},
		{"a step of the recording is skipped now",
			[]parity.Result{step("a", "platform", "OK", ok)},
			[]parity.Result{step("a", "platform", "SKIP", parity.Shape{Body: parity.BodyNone})},
			[]string{"a: step not run now (recorded status 200)"}},
		{"a step skipped in the recording runs now",
			[]parity.Result{step("a", "platform", "SKIP", parity.Shape{Body: parity.BodyNone})},
			[]parity.Result{step("a", "platform", "DRIFT", ok)},
			[]string{"a: step not in the recording (now status 200)"}},
		{"skipped in both", []parity.Result{step("a", "platform", "SKIP", parity.Shape{})}, []parity.Result{step("a", "platform", "SKIP", parity.Shape{})}, nil},
		{"a step only in this run",
			nil, []parity.Result{step("b", "studio", "OK", ok)},
			[]string{"b: step not in the recording (now status 200)"}},
		{"a step missing from this run",
			[]parity.Result{step("b", "studio", "OK", ok)}, nil,
			[]string{"b: step not run now (recorded status 200)"}},
		{"control steps are dubsim's own: not compared",
			[]parity.Result{step("control/health", "control", "OK", ok)}, nil, nil},
		{"differences in recording order",
			[]parity.Result{step("a", "platform", "OK", jsonShape(200, map[string]string{"/x": "string"})), step("b", "studio", "OK", ok)},
			[]parity.Result{step("b", "studio", "OK", jsonShape(404, nil)), step("a", "platform", "OK", jsonShape(200, map[string]string{"/x": "uri"}))},
			[]string{"a /x: class string (recorded) vs uri (now)", "b: status 200 (recorded) vs 404 (now)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			diffs := parity.Compare(&parity.Recording{Format: parity.Format, Steps: tc.was}, &parity.Recording{Format: parity.Format, Steps: tc.now})
			var got []string
			for _, d := range diffs {
				got = append(got, d.String())
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestRecordingRoundTrip(t *testing.T) {
	t.Parallel()
	rec := &parity.Recording{Format: parity.Format, PlatformURL: "http://a", StudioURL: "http://b", Steps: []parity.Result{
		{Name: "platform/balance", Interface: "platform", Method: "GET", Path: "/api/v1/balance",
			Shape: jsonShape(200, map[string]string{"": "object", "/balance_minutes": "integer"}), Document: "platform", Verdict: parity.VerdictOK},
		{Name: "platform/options", Interface: "platform", Method: "GET", Path: "/api/v1/options", Shape: parity.Shape{Status: 500, Body: parity.BodyEmpty},
			Verdict: parity.VerdictDrift, Reasons: []parity.Reason{{Kind: parity.ReasonStatus, Text: "status 500, expected 200"}}},
	}}
	var a, b bytes.Buffer
	require.NoError(t, parity.WriteRecording(&a, rec))
	back, err := parity.ReadRecording(bytes.NewReader(a.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, rec, back)
	require.NoError(t, parity.WriteRecording(&b, back))
	assert.Equal(t, a.String(), b.String(), "stable bytes")
	assert.Empty(t, parity.Compare(rec, back))

	_, err = parity.ReadRecording(bytes.NewReader([]byte(`{"format":"something else"}`)))
	assert.ErrorContains(t, err, `format "something else"`)
	_, err = parity.ReadRecording(bytes.NewReader([]byte(`[`)))
	assert.Error(t, err)
}

func TestFormatStep(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   parity.Result
		want string
	}{
		{"ok with a note", parity.Result{Name: "studio/wait-artifact", Method: "GET", Path: "/api/v1/artifacts/{artifactId}", Shape: parity.Shape{Status: 200},
			Verdict: "OK", Note: "upload_completed after 2 reads"},
			"OK     studio/wait-artifact               GET    /api/v1/artifacts/{artifactId}                             200  (upload_completed after 2 reads)"},
		{"drift with reasons on one line", parity.Result{Name: "platform/options", Method: "GET", Path: "/api/v1/options", Shape: parity.Shape{Status: 500},
			Verdict: "DRIFT", Reasons: []parity.Reason{{Kind: "unexpected-status", Text: "status 500,\n  expected 200"}, {Kind: "schema", Text: "x"}}},
			"DRIFT  platform/options                   GET    /api/v1/options                                            500  unexpected-status: status 500, expected 200; schema: x"},
		{"skipped: no status", parity.Result{Name: "platform/retranslate", Method: "POST", Path: "/api/v1/projects/{project_id}/translations",
			Verdict: "SKIP", Reasons: []parity.Reason{{Kind: "skipped", Text: "needs project_id"}}},
			"SKIP   platform/retranslate               POST   /api/v1/projects/{project_id}/translations                   -  skipped: needs project_id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, parity.FormatStep(tc.in))
		})
	}
}
