package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// mcpWire drives `dsh-lsp mcp` over its stdio with raw lines, so that tests
// see the exact bytes the server writes.
type mcpWire struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan []byte
}

// startMCPWire starts `dsh-lsp mcp --sessions root` and initializes it.
func startMCPWire(t *testing.T, root string, extra ...string) *mcpWire {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"mcp", "--sessions", root, "--target-cwd", mcpTargetCWD}, extra...)...)
	cmd.Env = cleanEnv(t.TempDir(), "XDG_CACHE_HOME="+t.TempDir())
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
	w := &mcpWire{t: t, cmd: cmd, stdin: stdin, lines: make(chan []byte, 64)}
	go func() {
		defer close(w.lines)
		br := bufio.NewReader(stdout)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				w.lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	w.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"wire","version":"1"}}}`)
	if m := w.response(1); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	w.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return w
}

func (w *mcpWire) send(line string) {
	w.t.Helper()
	if _, err := io.WriteString(w.stdin, line+"\n"); err != nil {
		w.t.Fatalf("writing to the MCP server: %v", err)
	}
}

// next returns the next line the server wrote.
func (w *mcpWire) next() []byte {
	w.t.Helper()
	select {
	case line, ok := <-w.lines:
		if !ok {
			w.t.Fatal("the MCP server closed its output")
		}
		return line
	case <-time.After(30 * time.Second):
		w.t.Fatal("no answer from the MCP server")
	}
	return nil
}

// response skips notifications and returns the response with this id
// (a JSON number), decoded.
func (w *mcpWire) response(id int) map[string]any {
	w.t.Helper()
	for {
		line := w.next()
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			w.t.Fatalf("the server wrote a line that is not JSON: %q", line)
		}
		if _, isNote := m["method"]; isNote {
			continue
		}
		if n, ok := m["id"].(float64); ok && int(n) == id {
			return m
		}
		w.t.Fatalf("answer %q, want the response to id %d", line, id)
	}
}

// TestMCPAnswersMalformedLinesAndReadsOn: every line that is not a JSON-RPC
// message gets a JSON-RPC error with id null (-32700 not JSON, -32600 not a
// message) and the next request is still served.
func TestMCPAnswersMalformedLinesAndReadsOn(t *testing.T) {
	t.Parallel()
	w := startMCPWire(t, t.TempDir())
	cases := []struct {
		name, line string
		code       float64
	}{
		{"not JSON", `{not json}`, -32700},
		{"a 0xFF byte", "\xff", -32700},
		{"truncated object", `{"jsonrpc":"2.0","id":3,"method":"ping"`, -32700},
		{"100,000-deep nesting", strings.Repeat("[", 100000) + strings.Repeat("]", 100000), -32700},
		{"empty batch", `[]`, -32600},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, -32600},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":4,"method":"ping"}`, -32600},
		{"no jsonrpc member", `{"id":5,"method":"ping"}`, -32600},
		{"a number", `42`, -32600},
	}
	for i, c := range cases {
		w.send(c.line)
		w.send("") // blank lines are skipped, not answered
		line := w.next()
		var m struct {
			JSONRPC string           `json:"jsonrpc"`
			ID      *json.RawMessage `json:"id"`
			Error   *struct {
				Code    float64 `json:"code"`
				Message string  `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(line, &m); err != nil || m.Error == nil {
			t.Fatalf("%s: answer %q, want a JSON-RPC error", c.name, line)
		}
		if m.JSONRPC != "2.0" || m.ID != nil || m.Error.Code != c.code || m.Error.Message == "" {
			t.Errorf("%s: answer %q, want code %v with id null", c.name, line, c.code)
		}
		id := 100 + i
		w.send(`{"jsonrpc":"2.0","id":` + itoa(id) + `,"method":"ping"}`)
		if r := w.response(id); r["error"] != nil {
			t.Errorf("%s: the ping after it failed: %v", c.name, r)
		}
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }
