package sessionstore_test

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/internal/golden"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

func jsonValue(t *testing.T, raw []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("invalid JSON %s: %v", raw, err)
	}
	return v
}

func sameJSON(t *testing.T, got, want []byte) bool {
	t.Helper()
	return reflect.DeepEqual(jsonValue(t, got), jsonValue(t, want))
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// errorJSON is a golden {"error":{name,code,message}} output.
func errorJSON(t *testing.T, err error) []byte {
	return marshal(t, map[string]any{"error": map[string]any{
		"name": "SessionReferenceError", "code": string(reference.CodeOf(err)), "message": err.Error(),
	}})
}

// TestGoldenJSONL runs testdata/golden/jsonl.json: real dsh outputs over
// the real on-disk store jsonl-root, read with the disk Store.
func TestGoldenJSONL(t *testing.T) {
	root := filepath.Join(golden.Dir(t), "jsonl-root")
	before := hashTree(t, root)
	defer func() {
		if hashTree(t, root) != before {
			t.Errorf("jsonl-root bytes changed")
		}
	}()
	for _, c := range golden.Load(t, "jsonl") {
		t.Run(c.Name, func(t *testing.T) {
			env := golden.NewSource(t, c.Input)
			if env.Store == nil {
				t.Fatal("jsonl case did not open the disk store")
			}
			var in struct {
				Mode        string  `json:"mode"`
				Query       string  `json:"query"`
				Limit       *int64  `json:"limit"`
				Remote      bool    `json:"remote"`
				SessionID   string  `json:"sessionId"`
				MentionText *string `json:"mentionText"`
			}
			if err := json.Unmarshal(c.Input, &in); err != nil {
				t.Fatal(err)
			}
			ctx := env.Context()
			var got []byte
			switch in.Mode {
			case "surface":
				s, err := env.Source.ReadSurface(ctx, in.SessionID)
				if err != nil {
					t.Fatal(err)
				}
				got = []byte(`{"surface":` + string(sessionstore.MarshalSurface(s)) + `}`)
			case "candidates", "prepare":
				cfg, err := reference.ConfigFromJSON(env.Config)
				if err != nil {
					t.Fatal(err)
				}
				svc, err := reference.NewService(env.Source, cfg)
				if err != nil {
					t.Fatal(err)
				}
				got = runServiceCase(t, svc, env, in.Mode, in.Query, in.Limit, in.Remote, in.MentionText)
			default:
				t.Fatalf("unexpected mode %q", in.Mode)
			}
			want := c.Output
			if in.Mode == "prepare" {
				want = trimPrepareOutput(t, want)
			}
			if !sameJSON(t, got, want) {
				t.Errorf("output:\n got %s\nwant %s", got, want)
			}
		})
	}
}

func runServiceCase(t *testing.T, svc *reference.Service, env *golden.Env, mode, query string, limit *int64, remote bool, mentionText *string) []byte {
	ctx := env.Context()
	if mode == "candidates" {
		var v any
		var err error
		switch {
		case remote:
			v, err = svc.RemoteCandidates(ctx, env.Target, query)
		default:
			l := svc.Config().CandidateLimit
			if limit != nil {
				l = *limit
			}
			v, err = svc.ListCandidates(ctx, env.Target, query, l)
		}
		if err != nil {
			return errorJSON(t, err)
		}
		return marshal(t, map[string]any{"candidates": v})
	}
	if mentionText == nil {
		t.Fatal("prepare case without mentionText")
	}
	p, err := svc.PrepareText(ctx, env.Target, *mentionText)
	if err != nil {
		return errorJSON(t, err)
	}
	out := map[string]any{
		"parsed":  map[string]any{"text": p.Content, "references": p.References},
		"content": []any{map[string]any{"type": "text", "text": p.Content}},
	}
	if p.ContextMessage != nil {
		cm := *p.ContextMessage
		cm.ID = "<uuid>"
		out["additionalContext"] = json.RawMessage(marshal(t, cm))
	}
	return marshal(t, out)
}

// trimPrepareOutput keeps the keys the store-level prepare check compares
// (promptData/referenceBytes/promptBytes are core-B's retention details,
// covered by package reference's own golden tests).
func trimPrepareOutput(t *testing.T, raw json.RawMessage) []byte {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "promptData")
	delete(m, "referenceBytes")
	delete(m, "promptBytes")
	return marshal(t, m)
}

func hashTree(t *testing.T, root string) string { return sessionstore.HashTreeForTest(t, root) }
