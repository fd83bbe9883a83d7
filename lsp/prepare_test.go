package lsp_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/lsp/lsptest"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// expectedStore is the subset of fixtures/expected/store-raw.expected.json
// the prepare tests use.
type expectedStore struct {
	Sessions []struct {
		Header struct {
			ID string `json:"id"`
		} `json:"header"`
		Label      string `json:"label"`
		URI        string `json:"uri"`
		References []struct {
			MaxReferenceBytes int64  `json:"maxReferenceBytes"`
			Prompt            string `json:"prompt"`
		} `json:"references"`
	} `json:"sessions"`
}

func loadExpected(t *testing.T, name string) expectedStore {
	t.Helper()
	b, err := os.ReadFile("../testdata/fixtures/expected/" + name + ".expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var e expectedStore
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

// prepareResult is the wire shape of a prepare result.
type prepareResult struct {
	Content        string                      `json:"content"`
	References     []reference.ParsedReference `json:"references"`
	ContextMessage *struct {
		Source struct {
			Kind       string           `json:"kind"`
			Form       string           `json:"form"`
			Version    int              `json:"version"`
			References []map[string]any `json:"references"`
		} `json:"source"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Role string `json:"role"`
		ID   string `json:"id"`
	} `json:"contextMessage"`
}

// TestPrepareMatchesFixtures prepares a mention of every fixture session
// at the budgets of the expected outputs, by text, by document and through
// workspace/executeCommand, and compares the prompt byte for byte.
func TestPrepareMatchesFixtures(t *testing.T) {
	for _, store := range []string{"store-raw", "store-zstd"} {
		t.Run(store, func(t *testing.T) { testPrepareMatchesFixtures(t, store) })
	}
}

func testPrepareMatchesFixtures(t *testing.T, store string) {
	exp := loadExpected(t, store)
	root := "../testdata/fixtures/" + store
	budgets := map[int64]*session{}
	compared := 0
	defer func() {
		if compared < 2*3*3 {
			t.Errorf("only %d prompts compared", compared)
		}
	}()
	for _, sess := range exp.Sessions {
		if sess.Header.ID == idD {
			// D is the July-2026 legacy log with baked prefix context: by
			// CONTRACT.md the projection reads envelope.displayContent, while
			// the expected file records dsh HEAD's (baked) projection.
			continue
		}
		for _, ref := range sess.References {
			s := budgets[ref.MaxReferenceBytes]
			if s == nil {
				s = startInit(t, map[string]any{"sessionsDir": root, "maxReferenceBytes": ref.MaxReferenceBytes})
				budgets[ref.MaxReferenceBytes] = s
			}
			label := sess.Label
			text := "see " + reference.FormatMention(sess.Header.ID, &label) + " please"
			uri := "file:///prompt-" + sess.Header.ID + ".dsh"
			s.Open(uri, text)
			calls := map[string]func(*prepareResult) error{
				"dsh/prepare text": func(r *prepareResult) error {
					return s.Call(context.Background(), "dsh/prepare", map[string]any{"text": text}, r)
				},
				"dsh/prepare uri": func(r *prepareResult) error {
					return s.Call(context.Background(), "dsh/prepare", map[string]any{"textDocument": map[string]any{"uri": uri}}, r)
				},
				"executeCommand": func(r *prepareResult) error {
					return s.Call(context.Background(), "workspace/executeCommand", map[string]any{
						"command": "dsh.prepare", "arguments": []any{map[string]any{"textDocument": map[string]any{"uri": uri}}}}, r)
				},
			}
			for name, call := range calls {
				var r prepareResult
				if err := call(&r); err != nil {
					t.Fatalf("%s %s B=%d: %v", name, sess.Header.ID, ref.MaxReferenceBytes, err)
				}
				if r.Content != "see @"+label+" please" || len(r.References) != 1 || r.References[0].SessionID != sess.Header.ID {
					t.Errorf("%s: content %q refs %+v", name, r.Content, r.References)
				}
				cm := r.ContextMessage
				if cm == nil || len(cm.Content) != 1 || cm.Role != "user" || cm.Source.Kind != "session-reference" ||
					cm.Source.Form != "recall" || cm.Source.Version != 1 || len(cm.ID) != 36 {
					t.Fatalf("%s: bad context message %+v", name, cm)
				}
				compared++
				if got := cm.Content[0].Text; got != ref.Prompt {
					t.Errorf("%s %s B=%d: prompt differs\n got %q\nwant %q", name, sess.Header.ID, ref.MaxReferenceBytes, got, ref.Prompt)
				}
			}
		}
	}
}

func TestPrepareNoReference(t *testing.T) {
	s := startInit(t, nil)
	var raw json.RawMessage
	if err := s.Call(context.Background(), "dsh/prepare", map[string]any{"text": "just <text> & more"}, &raw); err != nil {
		t.Fatal(err)
	}
	if got, want := string(raw), `{"content":"just <text> & more","references":[]}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestPrepareErrors(t *testing.T) {
	m := func(id string) string { return reference.FormatMention(id, nil) }
	tests := []struct {
		name    string
		options map[string]any
		args    map[string]any
		code    reference.Code
		msg     string
	}{
		{"invalid reference", nil, map[string]any{"text": "@[bad](dsh-session:not-canonical)"},
			reference.CodeInvalidReference, `invalid session reference URI "dsh-session:not-canonical"`},
		{"self reference (settings target)", map[string]any{"target": map[string]any{"sessionId": idA}}, map[string]any{"text": m(idA)},
			reference.CodeSelfReference, "cannot reference itself"},
		{"self reference (argument target)", nil, map[string]any{"text": m(idB), "target": map[string]any{"sessionId": idB}},
			reference.CodeSelfReference, "cannot reference itself"},
		{"too many", nil, map[string]any{"text": m(idA) + m(idB) + m(idC) + m(idE)},
			reference.CodeTooMany, "at most 3 sessions"},
		{"read failed", nil, map[string]any{"text": m("missing")},
			reference.CodeReadFailed, `failed to read referenced session: session "missing" not found`},
		{"budget exceeded", map[string]any{"maxReferenceBytes": 16}, map[string]any{"text": m(idA)},
			reference.CodeBudgetExceeded, "cannot fit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := map[string]any{"sessionsDir": storeRaw}
			for k, v := range tt.options {
				opts[k] = v
			}
			s := startInit(t, opts)
			err := s.Call(context.Background(), "dsh/prepare", tt.args, nil)
			e := lsptest.RPCError(err)
			if e == nil || e.Code != -32803 || lsptest.ErrorDataCode(err) != string(tt.code) || !strings.Contains(e.Message, tt.msg) {
				t.Fatalf("got %v (data code %q), want -32803 %s containing %q", err, lsptest.ErrorDataCode(err), tt.code, tt.msg)
			}
		})
	}
}

func TestCandidatesRequest(t *testing.T) {
	s := startInit(t, nil)
	var items []struct {
		SessionID string  `json:"sessionId"`
		Label     string  `json:"label"`
		CWD       *string `json:"cwd"`
		CreatedAt int64   `json:"createdAt"`
		URI       string  `json:"uri"`
		Mention   string  `json:"mention"`
	}
	if err := s.Call(context.Background(), "dsh/candidates", map[string]any{"query": "git", "limit": 5}, &items); err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0].SessionID != idA || items[0].URI != reference.EncodeURI(idA) ||
		items[0].Mention != reference.FormatMention(idA, ptr("Renaming git branches")) || items[0].CWD == nil {
		t.Fatalf("candidates = %+v", items)
	}
	err := s.Call(context.Background(), "dsh/candidates", map[string]any{"limit": 0}, nil)
	if lsptest.ErrorDataCode(err) != string(reference.CodeInvalidReference) {
		t.Errorf("limit 0: %v", err)
	}
	// Target without cwd: cwd-less sessions first.
	if err := s.Call(context.Background(), "dsh/candidates", map[string]any{"target": map[string]any{}}, &items); err != nil {
		t.Fatal(err)
	}
	if len(items) != 7 || items[0].SessionID != idF {
		t.Errorf("target without cwd: first %+v", items[0])
	}
}
