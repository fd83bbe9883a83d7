package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/storepath"
)

// mcpWire drives `dsh-lsp mcp` over its stdio with raw lines, so that tests
// see the exact bytes the server writes.
type mcpWire struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan []byte
	// last is the line response returned.
	last []byte
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
			w.last = line
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

// loneSurrogateStore writes a store with one session whose id is "\ude00x"
// (a lone low surrogate, WTF-8 in Go), titled "T\ud800", whose message text
// holds a lone surrogate too, and returns its root.
func loneSurrogateStore(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	id := "\xed\xb8\x80x" // WTF-8 of the JS string "\ude00x"
	seg, err := storepath.EncodeSegment(id)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "_no-cwd", seg)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	log := `{"type":"session","version":0,"id":"\ude00x","createdAt":1785000000000,"delegationDepth":0}
{"type":"turn/start","seq":0,"time":1785000000001,"data":{"turn":1}}
{"type":"user/message","seq":1,"time":1785000000002,"data":{"content":[{"type":"text","text":"surrogate \udc00 text"}],"source":{"kind":"user"},"role":"user","id":"m-u1"},"surfaceOp":"append"}
{"type":"session/title","seq":2,"time":1785000000003,"data":{"title":"T\ud800","messageSeqs":[1],"source":{"kind":"fallback"}}}
{"type":"turn/end","seq":3,"time":1785000000004,"data":{"turn":1,"reason":{"kind":"completed"}}}
`
	if err := os.WriteFile(filepath.Join(dir, "session.jsonl"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// rawField returns the raw JSON of the member at path (object keys, or
// array indexes as decimal strings) of the JSON text b, bytes as written.
func rawField(t *testing.T, b []byte, path ...string) []byte {
	t.Helper()
	cur := json.RawMessage(b)
	for _, p := range path {
		var next json.RawMessage
		if len(cur) > 0 && cur[0] == '[' {
			var arr []json.RawMessage
			if err := json.Unmarshal(cur, &arr); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			i, _ := strconv.Atoi(p)
			if i >= len(arr) {
				t.Fatalf("no element %s in %s", p, cur)
			}
			next = arr[i]
		} else {
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(cur, &obj); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			var ok bool
			if next, ok = obj[p]; !ok {
				t.Fatalf("no member %q in %s", p, cur)
			}
		}
		cur = next
	}
	return cur
}

// TestMCPKeepsLoneSurrogatesInEveryOutput reads the wire bytes of every
// MCP output that carries a session's strings: each text block, resource
// text, resource name and title must write a lone surrogate as \udxxx
// (JSON.stringify's form), never U+FFFD, and say what structuredContent
// says.
func TestMCPKeepsLoneSurrogatesInEveryOutput(t *testing.T) {
	t.Parallel()
	w := startMCPWire(t, loneSurrogateStore(t))
	uri := "dsh-session:" + base64.RawURLEncoding.EncodeToString([]byte(`"\ude00x"`))
	noLoss := func(name string, line []byte) {
		t.Helper()
		if bytes.Contains(line, []byte(`\ufffd`)) || bytes.Contains(line, []byte("\uFFFD")) || !utf8.Valid(line) {
			t.Errorf("%s: the answer lost a lone surrogate or is not UTF-8: %s", name, line)
		}
	}
	call := func(id int, tool, args string) []byte {
		t.Helper()
		w.send(`{"jsonrpc":"2.0","id":` + itoa(id) + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`)
		w.response(id) // skips notifications; the raw line is kept below
		return w.last
	}

	line := call(10, "dsh_prepare", `{"text":"see `+uri+` now"}`)
	noLoss("dsh_prepare", line)
	if got := rawField(t, line, "result", "content", "0", "text"); string(got) != `"see @\ude00x now"` {
		t.Errorf("dsh_prepare text block %s, want %s", got, `"see @\ude00x now"`)
	}
	if got, want := rawField(t, line, "result", "content", "0", "text"), rawField(t, line, "result", "structuredContent", "content"); !bytes.Equal(got, want) {
		t.Errorf("dsh_prepare text block %s, structuredContent.content %s", got, want)
	}
	ctxText := rawField(t, line, "result", "content", "1", "text")
	if want := rawField(t, line, "result", "structuredContent", "contextMessage", "content", "0", "text"); !sameJSString(ctxText, want) {
		t.Errorf("dsh_prepare context block %s, structuredContent %s", ctxText, want)
	}

	line = call(11, "dsh_read_session", `{"uri":"`+uri+`"}`)
	noLoss("dsh_read_session", line)
	readText := rawField(t, line, "result", "content", "0", "text")
	if got, want := readText, rawField(t, line, "result", "structuredContent", "contextMessage", "content", "0", "text"); !sameJSString(got, want) {
		t.Errorf("dsh_read_session text block %s, structuredContent %s", got, want)
	}
	if got := rawField(t, line, "result", "structuredContent", "label"); string(got) != `"T\ud800"` {
		t.Errorf("dsh_read_session label %s, want %s", got, `"T\ud800"`)
	}

	// The id given as an argument keeps its lone surrogate too.
	line = call(16, "dsh_read_session", `{"sessionId":"\ude00x"}`)
	noLoss("dsh_read_session by id", line)
	if got := rawField(t, line, "result", "content", "0", "text"); !sameJSString(got, readText) {
		t.Errorf("dsh_read_session by id: %s, want what the URI read gave: %s", got, readText)
	}

	line = call(12, "dsh_search_sessions", `{"query":""}`)
	noLoss("dsh_search_sessions", line)

	// A failing call: the text block says what structuredContent's error says.
	ghost := "dsh-session:" + base64.RawURLEncoding.EncodeToString([]byte(`"\ude00y"`))
	line = call(13, "dsh_prepare", `{"text":"@[T\ud800](`+uri+`) @[x](`+ghost+`)"}`)
	noLoss("dsh_prepare error", line)
	var failed struct {
		Result struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				Error struct{ Code, Message string } `json:"error"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &failed); err != nil || !failed.Result.IsError {
		t.Fatalf("dsh_prepare of an unknown session: %s", line)
	}
	e := failed.Result.StructuredContent.Error
	if got, want := string(rawField(t, line, "result", "content", "0", "text")), jsjson.Quote(e.Code+": "+e.Message); got != want ||
		!strings.Contains(e.Message, `"\ude00y"`) {
		t.Errorf("dsh_prepare error text block %s, want %s naming the session as JSON.stringify quotes it", got, want)
	}

	w.send(`{"jsonrpc":"2.0","id":14,"method":"resources/read","params":{"uri":"` + uri + `"}}`)
	w.response(14)
	line = w.last
	noLoss("resources/read", line)
	if got, want := rawField(t, line, "result", "contents", "0", "text"), readText; !sameJSString(got, want) {
		t.Errorf("resources/read text %s, dsh_read_session's %s", got, want)
	}

	w.send(`{"jsonrpc":"2.0","id":15,"method":"resources/list","params":{}}`)
	w.response(15)
	line = w.last
	noLoss("resources/list", line)
	for _, f := range []string{"name", "title"} {
		if got := rawField(t, line, "result", "resources", "0", f); string(got) != `"T\ud800"` {
			t.Errorf("resources/list %s %s, want %s", f, got, `"T\ud800"`)
		}
	}
}

// sameJSString reports whether two JSON string literals stand for the same
// JS string (lone surrogates included).
func sameJSString(a, b []byte) bool {
	x, ok1 := jsjson.String(a)
	y, ok2 := jsjson.String(b)
	return ok1 && ok2 && x == y
}
