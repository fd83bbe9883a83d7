package lsp_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"

	"github.com/dsh-lsp/dsh-lsp/lsp"
	"github.com/dsh-lsp/dsh-lsp/lsp/lsptest"
)

// TestTypedDispatch checks the phases every registered method gets from its
// one registration: params of the wrong JSON type are -32602 with a message
// naming the method, a notification method called as a request is -32601,
// and a request method sent as a notification is ignored (the connection
// goes on and the next request is answered).
func TestTypedDispatch(t *testing.T) {
	requests, notifications := lsp.RegisteredMethods()
	slices.Sort(requests)
	slices.Sort(notifications)
	wantRequests := []string{"completionItem/resolve", "dsh/candidates", "dsh/prepare", "dsh/search", "initialize", "shutdown",
		"textDocument/codeAction", "textDocument/completion", "textDocument/hover", "workspace/executeCommand"}
	if !slices.Equal(requests, wantRequests) {
		t.Fatalf("registered requests = %q, want %q", requests, wantRequests)
	}
	s := startInit(t, nil)
	ctx := context.Background()
	for _, m := range requests {
		if m == "initialize" || m == "shutdown" {
			continue // lifecycle: -32600 now; shutdown takes no params
		}
		t.Run(m, func(t *testing.T) {
			err := s.Call(ctx, m, json.RawMessage(`[true]`), nil)
			e := lsptest.RPCError(err)
			// dsh/prepare reports as the command it shares, dsh.prepare.
			name := strings.Replace(m, "dsh/prepare", "dsh.prepare", 1)
			if e == nil || e.Code != jsonrpc2.InvalidParams || !strings.Contains(e.Message, name) {
				t.Fatalf("%s with params [true]: got %v, want -32602 naming %s", m, err, name)
			}
		})
	}
	for _, m := range notifications {
		t.Run(m+" as a request", func(t *testing.T) {
			err := s.Call(ctx, m, map[string]any{}, nil)
			if e := lsptest.RPCError(err); e == nil || e.Code != jsonrpc2.MethodNotFound || !strings.Contains(e.Message, m) {
				t.Fatalf("%s called: got %v, want -32601 naming it", m, err)
			}
		})
	}
	s.Notify("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": "file:///a"}})
	var got any
	if err := s.Call(ctx, "dsh/candidates", map[string]any{"query": ""}, &got); err != nil {
		t.Fatalf("a request after a request sent as a notification: %v", err)
	}
}
