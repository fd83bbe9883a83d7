package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
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
			out := exchangeFrames(t, []string{`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{}}}`, c.body}, "serve", "--sessions", t.TempDir())
			var found bool
			for _, b := range lspBodies(t, out) {
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
				t.Fatalf("no answer to the request in %q", out)
			}
		})
	}
}

// exchangeFrames starts the binary with args, writes each body as a frame
// and waits for the answer to each (the ids are 0, 1, …) before it sends
// shutdown and exit, as a client does: a request still running when exit
// arrives would never be answered. It returns everything the server wrote.
func exchangeFrames(t *testing.T, bodies []string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = cleanEnv(t.TempDir())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var mu sync.Mutex
	var out []byte
	changed := make(chan struct{}, 1)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, 64<<10)
		for {
			n, err := stdout.Read(buf)
			mu.Lock()
			out = append(out, buf[:n]...)
			mu.Unlock()
			select {
			case changed <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	answered := func(id int) bool {
		mu.Lock()
		defer mu.Unlock()
		return bytes.Contains(out, []byte(`"id":`+strconv.Itoa(id)+`,`))
	}
	deadline := time.After(60 * time.Second)
	for id, body := range bodies {
		if _, err := io.WriteString(stdin, lspFrame(body)); err != nil {
			t.Fatal(err)
		}
		for !answered(id) {
			select {
			case <-changed:
			case <-deadline:
				mu.Lock()
				defer mu.Unlock()
				t.Fatalf("no answer to request %d in %q", id, out)
			}
		}
	}
	io.WriteString(stdin, lspFrame(`{"jsonrpc":"2.0","id":9,"method":"shutdown"}`)+lspFrame(`{"jsonrpc":"2.0","method":"exit"}`))
	stdin.Close()
	select {
	case <-readDone: // the server closed its output (it exited)
	case <-time.After(30 * time.Second):
	}
	cmd.Wait()
	mu.Lock()
	defer mu.Unlock()
	return out
}
