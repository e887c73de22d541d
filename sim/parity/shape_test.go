package parity_test

import (
	"encoding/binary"
	"testing"

	"github.com/dubsim/dubsim/sim/parity"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClassifyString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"uuid", "550e8400-e29b-41d4-a716-446655440000", parity.ClassUUID},
		{"uuid upper case", "550E8400-E29B-41D4-A716-446655440000", parity.ClassUUID},
		{"objectid", "507f1f77bcf86cd799439011", parity.ClassObjectID},
		{"not an objectid: g-j letters of the docs' example", "67a8f9b0c1d2e3f4g5h6i7j8", parity.ClassString},
		{"objectid of 23 digits is a string", "507f1f77bcf86cd79943901", parity.ClassString},
		{"platform timestamp", "2024-06-05T12:00:00Z", parity.ClassDateTime},
		{"studio timestamp with milliseconds", "2026-02-04T12:00:00.000Z", parity.ClassDateTime},
		{"timestamp with an offset", "2026-02-04T12:00:00+02:00", parity.ClassDateTime},
		{"a date alone is a string", "2026-02-04", parity.ClassString},
		{"a time without zone is a string", "2026-02-04T12:00:00", parity.ClassString},
		{"https URL", "https://example.com/output_video.mp4", parity.ClassURI},
		{"loopback URL with a port and a query", "http://127.0.0.1:8080/_uploads/x/a.wav?X-Amz-Signature=1", parity.ClassURI},
		{"s3 path", "s3://dubformer-artifacts/temp/550e8400-e29b-41d4-a716-446655440000/my-video.mp4", parity.ClassURI},
		{"relative storage path is a string", "uploads/67a8f9b0c1d2e3f4g5h6i7j8/video.mp4", parity.ClassString},
		{"mailto has no host", "mailto:someone@example.com", parity.ClassString},
		{"a URL with a space is a string", "https://example.com/a b", parity.ClassString},
		{"digits of a platform id", "802323387", parity.ClassString},
		{"empty", "", parity.ClassString},
		{"text", "Bonjour le monde!", parity.ClassString},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, parity.ClassifyString(tc.in))
		})
	}
}

func TestShapeOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		ct     string
		body   string
		kind   string
		mt     string
		fields map[string]string
	}{
		{"platform project receipt", "application/json; charset=utf-8",
			`{"project_id":"12345","cost_minutes":10,"estimated_completion_date":"2024-06-05T12:00:00Z","balance_minutes":90.5,"translations_count":0}`,
			parity.BodyJSON, "application/json", map[string]string{
				"": "object", "/project_id": "string", "/cost_minutes": "integer", "/estimated_completion_date": "date-time",
				"/balance_minutes": "number", "/translations_count": "integer"}},
		{"array elements collapse to *, classes of differing elements are listed", "application/json",
			`[{"id":"507f1f77bcf86cd799439011","remark":null,"tags":[]},{"id":"507f191e810c19729de860ea","remark":"x","tags":[1,2.5]}]`,
			parity.BodyJSON, "application/json", map[string]string{
				"": "array", "/*": "object", "/*/id": "objectid", "/*/remark": "null|string", "/*/tags": "array", "/*/tags/*": "integer|number"}},
		{"language keys collapse", "application/json",
			`{"voices":{"fr-FR":[{"voice_key":"53f154:fr-FR-DeniseNeural"}],"zh-Hant-TW":[],"es-419":[]},"byLang":{"en":"x"}}`,
			parity.BodyJSON, "application/json", map[string]string{
				"": "object", "/voices": "object", "/voices/{lang}": "array", "/voices/{lang}/*": "object",
				"/voices/{lang}/*/voice_key": "string", "/byLang": "object", "/byLang/en": "string"}},
		{"pointer tokens are escaped", "application/problem+json", `{"a/b":{"c~d":true},"":false}`,
			parity.BodyJSON, "application/problem+json", map[string]string{"": "object", "/a~1b": "object", "/a~1b/c~0d": "boolean", "/": "boolean"}},
		{"exponent is a number", "application/json", `{"n":1e3}`, parity.BodyJSON, "application/json", map[string]string{"": "object", "/n": "number"}},
		{"a scalar body", "application/json", `"2026-02-04T12:00:00.000Z"`, parity.BodyJSON, "application/json", map[string]string{"": "date-time"}},
		{"JSON media type, broken body", "application/json", `{"error":`, parity.BodyInvalidJSON, "application/json", nil},
		{"trailing data", "application/json", `{} {}`, parity.BodyInvalidJSON, "application/json", nil},
		{"empty body", "", "", parity.BodyEmpty, "", nil},
		{"whitespace is empty", "application/json", " \n", parity.BodyEmpty, "application/json", nil},
		{"S3 XML error", "application/xml", `<Error><Code>AccessDenied</Code></Error>`, parity.BodyXML, "application/xml", nil},
		{"HTML page", "text/html; charset=UTF-8", `<html></html>`, parity.BodyText, "text/html", nil},
		{"audio", "audio/wav", "RIFF....WAVE", parity.BodyBinary, "audio/wav", nil},
		{"media type in upper case", "Application/JSON", `{}`, parity.BodyJSON, "application/json", map[string]string{"": "object"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := parity.ShapeOf(200, tc.ct, []byte(tc.body))
			assert.Equal(t, 200, s.Status)
			assert.Equal(t, tc.kind, s.Body)
			assert.Equal(t, tc.mt, s.ContentType)
			assert.Equal(t, tc.fields, s.Fields)
		})
	}
}

func TestToneWAV(t *testing.T) {
	t.Parallel()
	b := parity.ToneWAV()
	require.Len(t, b, 44+32000)
	assert.Equal(t, "RIFF", string(b[0:4]))
	assert.Equal(t, "WAVE", string(b[8:12]))
	assert.Equal(t, uint32(len(b)-8), binary.LittleEndian.Uint32(b[4:8]))
	assert.Equal(t, uint32(16000), binary.LittleEndian.Uint32(b[24:28]))
	assert.Equal(t, "data", string(b[36:40]))
	assert.Equal(t, uint32(32000), binary.LittleEndian.Uint32(b[40:44]))
	assert.Equal(t, b, parity.ToneWAV(), "deterministic")
}
