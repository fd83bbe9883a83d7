package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// lspFrame frames an LSP message body.
func lspFrame(body string) string {
	return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
}

// lspBodies splits the server's output into message bodies.
func lspBodies(t *testing.T, out []byte) [][]byte {
	t.Helper()
	var bodies [][]byte
	for len(out) > 0 {
		i := bytes.Index(out, []byte("\r\n\r\n"))
		if i < 0 || !bytes.HasPrefix(out, []byte("Content-Length: ")) {
			t.Fatalf("not a frame: %q", out[:min(len(out), 80)])
		}
		n, err := strconv.Atoi(string(out[len("Content-Length: "):i]))
		if err != nil {
			t.Fatalf("bad header %q", out[:i])
		}
		bodies = append(bodies, out[i+4:i+4+n])
		out = out[i+4+n:]
	}
	return bodies
}

// TestLSPErrorsAreValidUTF8 sends requests whose error messages quote the
// client's own bytes next to non-ASCII text: every frame the server writes
// must be valid UTF-8, and a quoted excerpt must end at a character boundary.
func TestLSPErrorsAreValidUTF8(t *testing.T) {
	t.Parallel()
	emoji := strings.Repeat("😀", 20)
	cases := []struct {
		name, body string
		code       float64
		// wantIn is text the message must contain (an excerpt cut at a
		// character boundary).
		wantIn string
	}{
		{"bad params next to emoji", `{"jsonrpc":"2.0","id":1,"method":"textDocument/hover","params":{"position": {"line": 0, "character": -1}, "textDocument": {"uri": "` + emoji + `"}}}`,
			-32602, `"uri": "😀😀…`},
		{"bad params next to invalid bytes", `{"jsonrpc":"2.0","id":1,"method":"textDocument/hover","params":{"position": {"line": 0, "character": -1}, "textDocument": {"uri": "` + "\xff\xfe\xf0\x9f" + `"}}}`,
			-32602, "\uFFFD"},
		{"method name of invalid bytes", `{"jsonrpc":"2.0","id":1,"method":"` + "\xff\xf0\x9f" + emoji + `","params":{}}`,
			-32601, "method not found: \uFFFD\uFFFD😀"},
		{"unknown document with invalid bytes", `{"jsonrpc":"2.0","id":1,"method":"dsh/prepare","params":{"text":"@[x](dsh-session:` + "\xff" + emoji + `)"}}`,
			-32803, "dsh-session:\uFFFD😀"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			in := lspFrame(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{}}}`) +
				lspFrame(c.body) + lspFrame(`{"jsonrpc":"2.0","id":9,"method":"shutdown"}`) + lspFrame(`{"jsonrpc":"2.0","method":"exit"}`)
			r := runCLI(t, in, "serve", "--sessions", t.TempDir())
			var found bool
			for _, b := range lspBodies(t, []byte(r.stdout)) {
				if !utf8.Valid(b) {
					t.Errorf("frame is not valid UTF-8: %q", b)
				}
				var m struct {
					ID    int
					Error *struct {
						Code    float64
						Message string
					}
				}
				if json.Unmarshal(b, &m) == nil && m.ID == 1 {
					found = true
					if m.Error == nil || m.Error.Code != c.code || !strings.Contains(m.Error.Message, c.wantIn) {
						t.Errorf("answer %s, want code %v with a message containing %q", b, c.code, c.wantIn)
					}
				}
			}
			if !found {
				t.Fatalf("no answer to the request in %q", r.stdout)
			}
		})
	}
}
