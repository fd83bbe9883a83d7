package golden

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/reference"
)

// SameJSON reports whether two JSON documents hold the same value once
// decoded with encoding/json (key order and spacing ignored). It fails the
// test when either is not JSON.
func SameJSON(t testing.TB, got, want []byte) bool {
	t.Helper()
	return reflect.DeepEqual(decodeJSON(t, got), decodeJSON(t, want))
}

func decodeJSON(t testing.TB, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("golden: not JSON: %v\n%s", err, b)
	}
	return v
}

// ErrorOutput is the golden shape of a failure:
// {"error":{"name":"SessionReferenceError","code":…,"message":…}}, or
// name "Error" and code null for an error without a dsh code.
func ErrorOutput(err error) map[string]any {
	code := reference.CodeOf(err)
	e := map[string]any{"name": "SessionReferenceError", "code": string(code), "message": err.Error()}
	if code == "" {
		e["name"], e["code"] = "Error", nil
	}
	return map[string]any{"error": e}
}

// Service returns a reference.Service over the case's source with the
// case's config (dsh defaults for absent keys), failing the test when the
// config is invalid.
func (e *Env) Service(t testing.TB) *reference.Service {
	t.Helper()
	cfg, err := reference.ConfigFromJSON(e.Config)
	if err != nil {
		t.Fatalf("golden: config: %v", err)
	}
	svc, err := reference.NewService(e.Source, cfg)
	if err != nil {
		t.Fatalf("golden: config: %v", err)
	}
	return svc
}
