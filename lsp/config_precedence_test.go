package lsp_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/dsh-lsp/dsh-lsp/lsp"
	"github.com/dsh-lsp/dsh-lsp/lsp/lsptest"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// TestSettingsPrecedence drives the settings of CONTRACT §2 over the
// protocol: initializationOptions first, then each settings.dsh push applied
// over them key by key. The default store (no sessionsDir anywhere) is an
// empty directory, so a push that drops the initializationOptions'
// sessionsDir shows as an empty candidate list: that is what Neovim's
// vim.lsp.config did to users (it pushes `settings = {dsh = {}}` right
// after initialize).
func TestSettingsPrecedence(t *testing.T) {
	all := []string{idA, idB, idC, idD, idE, idF, idG}
	withoutA := []string{idB, idC, idD, idE, idF, idG}
	type push struct {
		// dsh is the raw settings.dsh of the push ("" sends settings
		// without a dsh section).
		dsh string
		// refused: the push is invalid and must be reported, the settings
		// before it staying in force.
		refused string
	}
	tests := []struct {
		name   string
		init   string
		pushes []push
		// want is the number of candidates dsh/candidates lists after the
		// pushes; wantIDs, when set, which ones.
		want    int
		wantIDs []string
		// maxRefs is the effective maxReferences (checked by preparing a
		// text that cites maxRefs+1 sessions, when below 3).
		maxRefs int
	}{
		{name: "no push", init: `{"sessionsDir":STORE,"candidateLimit":2}`, want: 2, maxRefs: 3},
		{name: "empty dsh keeps every initializationOptions key",
			init:   `{"sessionsDir":STORE,"candidateLimit":2,"maxReferences":1,"target":{"sessionId":"` + idA + `"}}`,
			pushes: []push{{dsh: `{}`}}, want: 2, maxRefs: 1},
		{name: "empty dsh keeps the store (Neovim 0.11+ vim.lsp.config)", init: `{"sessionsDir":STORE}`,
			pushes: []push{{dsh: `{}`}}, want: 7, wantIDs: all, maxRefs: 3},
		{name: "null dsh keeps the store", init: `{"sessionsDir":STORE}`,
			pushes: []push{{dsh: `null`}}, want: 7, maxRefs: 3},
		{name: "no dsh section keeps the store", init: `{"sessionsDir":STORE,"candidateLimit":3}`,
			pushes: []push{{dsh: ``}}, want: 3, maxRefs: 3},
		{name: "partial push overrides its key only", init: `{"sessionsDir":STORE,"candidateLimit":2,"maxReferences":1}`,
			pushes: []push{{dsh: `{"candidateLimit":5}`}}, want: 5, maxRefs: 1},
		{name: "partial push keeps the initializationOptions target",
			init:   `{"sessionsDir":STORE,"target":{"sessionId":"` + idA + `"}}`,
			pushes: []push{{dsh: `{"maxReferences":2}`}}, want: 6, wantIDs: withoutA, maxRefs: 2},
		{name: "pushed target replaces the initializationOptions target",
			init:   `{"sessionsDir":STORE,"target":{"sessionId":"` + idB + `"}}`,
			pushes: []push{{dsh: `{"target":{"sessionId":"` + idA + `"}}`}}, want: 6, wantIDs: withoutA, maxRefs: 3},
		{name: "pushed sessionsDir replaces the store, other keys stay",
			init:   `{"sessionsDir":STORE,"candidateLimit":2,"maxReferences":1}`,
			pushes: []push{{dsh: `{"sessionsDir":EMPTY}`}}, want: 0, maxRefs: 1},
		{name: "settings only pushed, no initializationOptions", init: ``,
			pushes: []push{{dsh: `{"sessionsDir":STORE,"candidateLimit":4}`}}, want: 4, maxRefs: 3},
		{name: "null in a push restores the default, not the initializationOptions value",
			init:   `{"sessionsDir":STORE,"candidateLimit":2,"maxReferences":1}`,
			pushes: []push{{dsh: `{"candidateLimit":null}`}}, want: 7, maxRefs: 1},
		{name: "pushes do not accumulate: each applies over the initializationOptions",
			init:   `{"sessionsDir":STORE,"candidateLimit":2}`,
			pushes: []push{{dsh: `{"candidateLimit":5,"maxReferences":1}`}, {dsh: `{"maxReferences":2}`}}, want: 2, maxRefs: 2},
		{name: "an empty push after a partial one returns to the initializationOptions",
			init:   `{"sessionsDir":STORE,"candidateLimit":2}`,
			pushes: []push{{dsh: `{"sessionsDir":EMPTY}`}, {dsh: `{}`}}, want: 2, maxRefs: 3},
		{name: "invalid push refused, previous settings kept",
			init: `{"sessionsDir":STORE,"candidateLimit":2}`,
			pushes: []push{{dsh: `{"candidateLimit":5}`}, {dsh: `{"candidateLimit":-1}`, refused: "candidateLimit"},
				{dsh: `{"sessionsDir":"  "}`, refused: "sessionsDir"}, {dsh: `[1]`, refused: "JSON object"}},
			want: 5, maxRefs: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			def, empty := t.TempDir(), t.TempDir()
			subst := func(s string) json.RawMessage {
				r := []byte(s)
				for _, kv := range [][2]string{{"STORE", storeRaw}, {"EMPTY", empty}} {
					q, _ := json.Marshal(kv[1])
					r = []byte(strings.ReplaceAll(string(r), kv[0], string(q)))
				}
				return r
			}
			s := start(t, lsp.Options{ResolveRoot: func(flag string) (string, error) {
				if flag == "" {
					return def, nil // the default store: empty
				}
				return flag, nil
			}})
			var init any
			if tc.init != "" {
				init = subst(tc.init)
			}
			if _, err := s.Initialize(init); err != nil {
				t.Fatalf("initialize: %v", err)
			}
			for _, p := range tc.pushes {
				settings := map[string]json.RawMessage{}
				if p.dsh != "" {
					settings["dsh"] = subst(p.dsh)
				}
				s.Notify("workspace/didChangeConfiguration", map[string]any{"settings": settings})
				if p.refused != "" {
					s.Await(lsptest.ShownMessage(protocol.MessageTypeError, p.refused))
				}
			}
			// The server handles messages in order: this request sees every push.
			var items []reference.CandidateItem
			if err := s.Call(context.Background(), "dsh/candidates", map[string]any{}, &items); err != nil {
				t.Fatalf("dsh/candidates: %v", err)
			}
			var ids []string
			for _, it := range items {
				ids = append(ids, it.SessionID)
			}
			if len(ids) != tc.want {
				t.Errorf("dsh/candidates lists %d sessions %v, want %d", len(ids), ids, tc.want)
			}
			if tc.wantIDs != nil {
				got := slices.Clone(ids)
				slices.Sort(got)
				if !slices.Equal(got, tc.wantIDs) {
					t.Errorf("dsh/candidates lists %v, want %v", got, tc.wantIDs)
				}
			}
			if tc.want == 0 {
				return // no sessions to cite
			}
			// maxReferences: citing maxRefs sessions prepares, one more is refused.
			cite := func(n int) string {
				text := "compare"
				for _, id := range []string{idC, idD, idE, idF}[:n] {
					text += " @[s](" + reference.EncodeURI(id) + ")"
				}
				return text
			}
			if err := s.Call(context.Background(), "dsh/prepare", map[string]any{"text": cite(tc.maxRefs)}, nil); err != nil {
				t.Errorf("prepare citing %d sessions (maxReferences %d): %v", tc.maxRefs, tc.maxRefs, err)
			}
			if tc.maxRefs < 3 {
				err := s.Call(context.Background(), "dsh/prepare", map[string]any{"text": cite(tc.maxRefs + 1)}, nil)
				if code := lsptest.ErrorDataCode(err); code != string(reference.CodeTooMany) {
					t.Errorf("prepare citing %d sessions with maxReferences %d: error code %q (%v), want %s",
						tc.maxRefs+1, tc.maxRefs, code, err, reference.CodeTooMany)
				}
			}
		})
	}
}
