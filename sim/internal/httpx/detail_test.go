package httpx

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteErrorDetailHeader(t *testing.T) {
	t.Parallel()
	api := API{Render: func(err error) (int, any) { return 400, map[string]string{"message": sim.ErrorMessage(err)} }}
	w := httptest.NewRecorder()
	api.WriteError(w, httptest.NewRequest("GET", "/", nil), sim.Errorf(sim.CodeValidation, "Documented text").WithDetail("item[%d]", 2))
	assert.Equal(t, "item[2]", w.Header().Get(HeaderErrorDetail))
	var body map[string]string
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body))
	assert.Equal(t, "Documented text", body["message"])

	w = httptest.NewRecorder()
	api.WriteError(w, httptest.NewRequest("GET", "/", nil), sim.Errorf(sim.CodeValidation, "plain"))
	assert.Empty(t, w.Header().Values(HeaderErrorDetail))
}
