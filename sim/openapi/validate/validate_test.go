package validate_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/dubsim/dubsim/sim/openapi/validate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const doc = `{
  "openapi": "3.1.0",
  "info": {"title": "t", "version": "1"},
  "paths": {
    "/things/{id}": {
      "get": {
        "operationId": "getThing",
        "responses": {
          "200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}},
          "4XX": {"description": "client error", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
          "default": {"description": "other", "content": {"text/plain": {"schema": {"type": "string"}}}}
        }
      },
      "delete": {
        "operationId": "deleteThing",
        "responses": {
          "204": {"description": "gone"},
          "429": {"description": "slow down", "headers": {"Retry-After": {"required": true, "schema": {"type": "integer", "minimum": 1}}},
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
        }
      }
    },
    "/things/special": {
      "get": {"operationId": "getSpecial", "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "array"}}}}}}
    },
    "/uploads/{id}": {
      "put": {
        "operationId": "upload",
        "responses": {
          "200": {"description": "ok", "headers": {"ETag": {"required": true, "schema": {"type": "string"}}}},
          "403": {"description": "denied", "content": {"application/xml": {"schema": {"type": "object", "xml": {"name": "Error"}}}}}
        }
      }
    }
  },
  "components": {"schemas": {
    "Thing": {"type": "object", "required": ["id", "at"], "additionalProperties": false,
      "properties": {"id": {"type": "string", "format": "uuid"}, "at": {"type": "string", "format": "date-time"}, "n": {"type": ["integer", "null"]}}},
    "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}, "additionalProperties": false}
  }}
}`

func TestCheck(t *testing.T) {
	t.Parallel()
	v, err := validate.New("t", []byte(doc))
	require.NoError(t, err)
	js := http.Header{"Content-Type": {"application/json; charset=utf-8"}}
	cases := []struct {
		name         string
		method, path string
		status       int
		header       http.Header
		body         string
		op, response string
		err          string // substring; "" means valid
	}{
		{"valid", "GET", "/things/6f1c2f0e-7d3a-4e5b-9a1c-2b3c4d5e6f70", 200, js, `{"id":"6f1c2f0e-7d3a-4e5b-9a1c-2b3c4d5e6f70","at":"2026-01-02T03:04:05.000Z","n":null}`, "getThing", "200", ""},
		{"literal segment wins over a parameter", "GET", "/things/special", 200, js, `[]`, "getSpecial", "200", ""},
		{"format asserted", "GET", "/things/x", 200, js, `{"id":"x","at":"2026-01-02T03:04:05Z"}`, "getThing", "200", "is not valid uuid"},
		{"extra field", "GET", "/things/x", 200, js, `{"id":"6f1c2f0e-7d3a-4e5b-9a1c-2b3c4d5e6f70","at":"2026-01-02T03:04:05Z","z":1}`, "getThing", "200", "additional properties 'z'"},
		{"missing field", "GET", "/things/x", 200, js, `{"id":"6f1c2f0e-7d3a-4e5b-9a1c-2b3c4d5e6f70"}`, "getThing", "200", "missing property 'at'"},
		{"not JSON", "GET", "/things/x", 200, js, `{"id":`, "getThing", "200", "body is not JSON"},
		{"range key", "GET", "/things/x", 404, js, `{"error":"Not Found"}`, "getThing", "4XX", ""},
		{"default key", "GET", "/things/x", 503, http.Header{"Content-Type": {"text/plain"}}, "down", "getThing", "default", ""},
		{"undocumented content type", "GET", "/things/x", 404, http.Header{"Content-Type": {"text/html"}}, "<p>", "getThing", "4XX", "Content-Type text/html is not documented (documented: application/json)"},
		{"no body documented", "DELETE", "/things/x", 204, http.Header{}, "", "deleteThing", "204", ""},
		{"body where none is documented", "DELETE", "/things/x", 204, js, "{}", "deleteThing", "204", "no body is documented"},
		{"undocumented status", "DELETE", "/things/x", 500, js, "{}", "deleteThing", "", "status 500 is not documented (documented: 204, 429)"},
		{"required header present", "DELETE", "/things/x", 429, http.Header{"Content-Type": {"application/json"}, "Retry-After": {"30"}}, `{"error":"slow"}`, "deleteThing", "429", ""},
		{"required header missing", "DELETE", "/things/x", 429, js, `{"error":"slow"}`, "deleteThing", "429", "required header Retry-After is missing"},
		{"header against its schema", "DELETE", "/things/x", 429, http.Header{"Content-Type": {"application/json"}, "Retry-After": {"0"}}, `{"error":"slow"}`, "deleteThing", "429", "header Retry-After"},
		{"HEAD skips the body", "HEAD", "/things/x", 200, js, "", "", "", "no documented operation"},
		{"XML root", "PUT", "/uploads/u", 403, http.Header{"Content-Type": {"application/xml"}}, `<?xml version="1.0"?><Error><Code>AccessDenied</Code></Error>`, "upload", "403", ""},
		{"XML wrong root", "PUT", "/uploads/u", 403, http.Header{"Content-Type": {"application/xml"}}, `<Oops/>`, "upload", "403", "XML root element is Oops, documented Error"},
		{"XML malformed", "PUT", "/uploads/u", 403, http.Header{"Content-Type": {"application/xml"}}, `<Error>`, "upload", "403", "body is not XML"},
		{"required ETag", "PUT", "/uploads/u", 200, http.Header{}, "", "upload", "200", "required header ETag is missing"},
		{"unknown path", "GET", "/nothing", 200, js, "{}", "", "", "no documented operation"},
		{"segment count", "GET", "/things/a/b", 200, js, "{}", "", "", "no documented operation"},
		{"empty parameter", "GET", "/things/", 200, js, "{}", "", "", "no documented operation"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := v.Check(c.method, c.path, c.status, c.header, []byte(c.body))
			if c.err == "" {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.err)
			}
			assert.Equal(t, c.op, res.Operation)
			assert.Equal(t, c.response, res.Response)
		})
	}
	_, err = v.Check("GET", "/nothing", 200, js, nil)
	assert.True(t, errors.Is(err, validate.ErrNoOperation))
	ops := v.Operations()
	require.Len(t, ops, 4)
	assert.Equal(t, validate.Operation{ID: "getThing", Method: "GET", Path: "/things/{id}", Responses: []string{"200", "4XX", "default"}}, ops[1])
}

func TestNewRefusesBadDocuments(t *testing.T) {
	t.Parallel()
	for name, d := range map[string]string{
		"not JSON":        `{`,
		"response $ref":   `{"paths":{"/a":{"get":{"responses":{"200":{"$ref":"#/components/responses/X"}}}}}}`,
		"dangling $ref":   `{"paths":{"/a":{"get":{"responses":{"200":{"description":"","content":{"application/json":{"schema":{"$ref":"#/components/schemas/Nope"}}}}}}}}}`,
		"invalid keyword": `{"paths":{"/a":{"get":{"responses":{"200":{"description":"","content":{"application/json":{"schema":{"type":"strung"}}}}}}}}}`,
	} {
		_, err := validate.New("bad", []byte(d))
		assert.Error(t, err, name)
	}
}
