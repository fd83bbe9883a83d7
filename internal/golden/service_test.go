package golden

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/reference"
)

// These tests validate the harness itself (shorthand expansion, Memory's
// store pipeline, titles, overrides) by running the candidates and prepare
// golden groups through the real core service.

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

func errorOutput(err error) []byte {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"name": "SessionReferenceError", "code": string(reference.CodeOf(err)), "message": err.Error()}})
	return b
}

func newService(t *testing.T, env *Env) *reference.Service {
	t.Helper()
	cfg, err := reference.ConfigFromJSON(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := reference.NewService(env.Source, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func TestHarnessCandidates(t *testing.T) {
	for _, c := range Load(t, "candidates") {
		t.Run(c.Name, func(t *testing.T) {
			env := NewSource(t, c.Input)
			var in struct {
				Query  string `json:"query"`
				Limit  *int64 `json:"limit"`
				Remote bool   `json:"remote"`
			}
			if err := json.Unmarshal(c.Input, &in); err != nil {
				t.Fatal(err)
			}
			svc := newService(t, env)
			var v any
			var err error
			if in.Remote {
				v, err = svc.RemoteCandidates(env.Context(), env.Target, in.Query)
			} else {
				limit := svc.Config().CandidateLimit
				if in.Limit != nil {
					limit = *in.Limit
				}
				v, err = svc.ListCandidates(env.Context(), env.Target, in.Query, limit)
			}
			var got []byte
			if err != nil {
				got = errorOutput(err)
			} else {
				got, _ = json.Marshal(map[string]any{"candidates": v})
			}
			if !sameJSON(t, got, c.Output) {
				t.Errorf("got %s\nwant %s", got, c.Output)
			}
		})
	}
}

func TestHarnessPrepare(t *testing.T) {
	for _, c := range Load(t, "prepare") {
		t.Run(c.Name, func(t *testing.T) {
			env := NewSource(t, c.Input)
			var in struct {
				References  []json.RawMessage `json:"references"`
				MentionText *string           `json:"mentionText"`
			}
			if err := json.Unmarshal(c.Input, &in); err != nil {
				t.Fatal(err)
			}
			var want struct {
				Error             json.RawMessage `json:"error"`
				AdditionalContext json.RawMessage `json:"additionalContext"`
			}
			if err := json.Unmarshal(c.Output, &want); err != nil {
				t.Fatal(err)
			}
			svc := newService(t, env)
			var cm *reference.ContextMessage
			var err error
			if in.MentionText != nil {
				var p *reference.PreparedText
				if p, err = svc.PrepareText(env.Context(), env.Target, *in.MentionText); err == nil {
					cm = p.ContextMessage
				}
			} else {
				var p *reference.Prepared
				if p, err = svc.PrepareJSON(env.Context(), env.Target, in.References); err == nil {
					cm = p.ContextMessage
				}
			}
			if want.Error != nil {
				if err == nil {
					t.Fatalf("no error, want %s", want.Error)
				}
				if got := errorOutput(err); !sameJSON(t, got, []byte(`{"error":`+string(want.Error)+`}`)) {
					t.Errorf("error %s, want %s", got, want.Error)
				}
				return
			}
			if err != nil {
				t.Fatalf("error %v", err)
			}
			if (cm == nil) != (want.AdditionalContext == nil) {
				t.Fatalf("context message %v, want %s", cm, want.AdditionalContext)
			}
			if cm != nil {
				masked := *cm
				masked.ID = "<uuid>"
				got, _ := json.Marshal(masked)
				if !sameJSON(t, got, want.AdditionalContext) {
					t.Errorf("additionalContext\n got %s\nwant %s", got, want.AdditionalContext)
				}
			}
		})
	}
}
