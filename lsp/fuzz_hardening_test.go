package lsp_test

// Protocol fuzzing: arbitrary byte streams go through the real
// LSP framing and dispatch of an in-process server, after a valid
// initialize. The server must never panic or hang; if it read every frame
// cleanly it must still answer a probe request sent after the garbage; and
// a fresh connection must always serve a valid request afterwards.
//
//	go test ./lsp -run '^$' -fuzz FuzzProtocol -fuzztime 2m

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/dsh-lsp/dsh-lsp/lsp"
	"github.com/dsh-lsp/dsh-lsp/lsp/lsptest"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/storetest"
)

// hardeningStore is the read-only real-format fixture store.
const hardeningStore = "../testdata/fixtures/store-raw"

// hardeningID is a fixture session ("Renaming git branches").
const hardeningID = "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0001"

// lspFrame frames body with a Content-Length header.
func lspFrame(body string) string {
	return "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}

func callFrame(id, method, params string) string {
	return lspFrame(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + `}`)
}

func notifyFrame(method, params string) string {
	return lspFrame(`{"jsonrpc":"2.0","method":"` + method + `","params":` + params + `}`)
}

// fuzzPrelude initializes the server (no workDoneProgress, so the server
// never calls the client) so that the garbage reaches the feature handlers.
var fuzzPrelude = callFrame("0", "initialize", `{"processId":null,"rootUri":"file:///home/alice/proj","capabilities":{"general":{"positionEncodings":["utf-16"]}},"initializationOptions":{"sessionsDir":"`+hardeningStore+`"}}`) +
	notifyFrame("initialized", `{}`)

// probeID is the id of the request sent after the garbage.
const probeID = `"hardening-probe"`

var probeFrame = callFrame(probeID, "dsh/candidates", `{"limit":1}`)

// protocolMethods are every method the server handles, plus unknown ones.
var protocolMethods = []string{
	"initialize", "shutdown", "textDocument/completion", "completionItem/resolve", "textDocument/hover",
	"textDocument/codeAction", "workspace/executeCommand", "dsh/prepare", "dsh/candidates",
	"initialized", "textDocument/didOpen", "textDocument/didChange", "textDocument/didClose",
	"workspace/didChangeConfiguration", "dsh/setTarget", "$/cancelRequest", "$/setTrace", "nope/nope",
}

func isNotification(method string) bool {
	switch method {
	case "initialized", "textDocument/didOpen", "textDocument/didChange", "textDocument/didClose",
		"workspace/didChangeConfiguration", "dsh/setTarget", "$/cancelRequest", "$/setTrace":
		return true
	}
	return false
}

// badParams are params of the wrong shape or type for every field the
// handlers read.
var badParams = []string{
	`null`, `0`, `"x"`, `[]`, `[1,{}]`, `{}`, `true`,
	`{"textDocument":1}`, `{"textDocument":{"uri":5}}`, `{"textDocument":{"uri":""}}`,
	`{"textDocument":{"uri":"file:///f.dsh","text":7,"version":"1"}}`,
	`{"textDocument":{"uri":"file:///f.dsh"},"position":{"line":-1,"character":"x"}}`,
	`{"textDocument":{"uri":"file:///f.dsh"},"position":{"line":4294967296,"character":1e300}}`,
	`{"textDocument":{"uri":"file:///f.dsh"},"position":{"line":0,"character":4294967295}}`,
	`{"textDocument":{"uri":"file:///f.dsh","version":1},"contentChanges":[{"range":{"start":{"line":9,"character":9},"end":{"line":0,"character":0}},"text":"x"}]}`,
	`{"textDocument":{"uri":"file:///f.dsh","version":1},"contentChanges":[{"range":{"start":{"line":0,"character":2},"end":{"line":0,"character":1}},"text":"x"}]}`,
	`{"textDocument":{"uri":"file:///f.dsh","version":1},"contentChanges":[{"range":null,"text":null}]}`,
	`{"textDocument":{"uri":"file:///f.dsh","version":1},"contentChanges":{"text":"x"}}`,
	`{"textDocument":{"uri":"file:///f.dsh"},"range":{"start":{"line":0,"character":0},"end":{"line":99,"character":0}},"context":{"diagnostics":[{"range":5,"code":{},"data":[]}]}}`,
	`{"command":"dsh.prepare","arguments":[{"text":"@[x](dsh-session:` + `eyJ4Ijp9` + `)"}]}`,
	`{"command":"dsh.prepare","arguments":[{"textDocument":{"uri":"file:///f.dsh"},"target":{"sessionId":5}}]}`,
	`{"command":"dsh.prepare","arguments":["file:///f.dsh"]}`,
	`{"command":"dsh.prepare","arguments":[{"text":"x"},{"text":"y"}]}`,
	`{"command":7,"arguments":"x"}`,
	`{"text":"` + strings.Repeat(`@[a](dsh-session:`, 50) + `"}`,
	`{"text":"\u0000\ud800 @[\u2028](dsh-session:IjxcL3JlZmVyZW5jZWQtc2Vzc2lvbnM-Ig)"}`,
	`{"query":{"a":1},"limit":-1}`, `{"query":"a","limit":1e308}`, `{"limit":0.5}`, `{"limit":"NaN"}`,
	`{"target":{"cwd":["x"]}}`, `{"target":"x"}`, `{"target":{"sessionId":"` + hardeningID + `"}}`,
	`{"settings":{"dsh":{"sessionsDir":"/nonexistent/\u0000/x","maxReferences":1e9}}}`,
	`{"settings":{"dsh":{"candidateLimit":-1}}}`, `{"settings":[1]}`, `{"settings":{"dsh":null}}`,
	`{"label":"x","data":{"sessionId":"../../etc/passwd"}}`, `{"label":"x","data":"str"}`,
	`{"id":1e400}`, `{"id":99999999999999999999999}`, `{"id":{"x":1}}`, `{"id":null}`,
	`{"processId":"x","capabilities":[]}`, `{"capabilities":{"general":{"positionEncodings":"utf-8"}}}`,
	`{"capabilities":{},"initializationOptions":{"sessionsDir":5}}`, `{"capabilities":{},"workspaceFolders":[{"uri":"::bad"}]}`,
}

// oddIDs are request ids jsonrpc2 accepts: extreme int64, -0, empty and
// long strings, null (a notification).
var oddIDs = []string{`9223372036854775807`, `-9223372036854775808`, `-0`, `""`, `"` + strings.Repeat("9", 300) + `"`, `null`}

// invalidIDs are ids jsonrpc2 v1.0.1 cannot decode (beyond int64,
// fractions, other JSON types): the envelope is invalid and the connection
// ends (see TestProtocolBrokenFramingThenFreshConnection).
var invalidIDs = []string{`1e400`, `99999999999999999999999`, `-9223372036854775809`, `1.5`, `true`, `{}`, `[]`}

// protocolSeeds returns the seed corpus: bad framing, invalid JSON, wrong
// types in params of every method, odd ids, batches.
func protocolSeeds() [][]byte {
	open := notifyFrame("textDocument/didOpen", `{"textDocument":{"uri":"file:///f.dsh","languageId":"dsh","version":1,"text":"hi @Ren\nsee @[x](dsh-session:eyJ4In0)\n"}}`)
	seeds := []string{
		"",
		"Content-Length: -1\r\n\r\n{}",
		"Content-Length: 99999999999999999999\r\n\r\n{}",
		"Content-Length: 1073741824\r\n\r\n{}",
		"Content-Length: 0\r\n\r\n",
		"Content-Length: abc\r\n\r\n{}",
		"Content-Length: 10\r\n\r\n{}",
		"Content-Type: x\r\n\r\n{}",
		"no colon here\r\n\r\n{}",
		"Content-Length: 2\n\n{}",
		"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
		"Content-Length: 5\r\n\r\n{\"jsonrpc\"",
		lspFrame(`{`), lspFrame(`not json`), lspFrame(`{"jsonrpc":"1.0","id":1,"method":"shutdown"}`),
		lspFrame(`{"jsonrpc":"2.0","id":1}`), lspFrame(`{"jsonrpc":"2.0","id":1,"method":"x","result":1}`),
		lspFrame(`{"jsonrpc":"2.0","id":7,"result":null}`), lspFrame(`{"jsonrpc":"2.0","id":7,"error":{"code":"x"}}`),
		lspFrame(`[]`), lspFrame(`[1,2]`),
		lspFrame(`[{"jsonrpc":"2.0","id":1,"method":"dsh/candidates"},{"jsonrpc":"2.0","method":"initialized"}]`),
		lspFrame(`{"jsonrpc":"2.0","id":1,"method":"dsh/candidates","params":{}}{"x":1}`),
		lspFrame(`{"jsonrpc":"2.0","id":1,"method":"` + strings.Repeat("x", 5000) + `"}`),
		lspFrame(strings.Repeat("[", 100000)),
		lspFrame(`{"jsonrpc":"2.0","id":1,"method":"dsh/prepare","params":` + strings.Repeat(`{"a":`, 20000) + `1` + strings.Repeat(`}`, 20000) + `}`),
		lspFrame("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"dsh/prepare\",\"params\":{\"text\":\"\xff\xfe\x00\"}}"),
		open + callFrame("2", "textDocument/completion", `{"textDocument":{"uri":"file:///f.dsh"},"position":{"line":0,"character":7}}`),
		open + notifyFrame("$/cancelRequest", `{"id":2}`) + callFrame("2", "dsh/prepare", `{"textDocument":{"uri":"file:///f.dsh"}}`),
		callFrame("1", "shutdown", `null`) + callFrame("2", "dsh/candidates", `{}`),
		callFrame("1", "shutdown", `null`) + notifyFrame("exit", `null`),
	}
	for i, m := range protocolMethods {
		for j, p := range badParams {
			// Each method as the kind it is, and now and then as the other.
			if isNotification(m) == ((i+j)%7 != 0) {
				seeds = append(seeds, open+notifyFrame(m, p))
			} else {
				seeds = append(seeds, open+callFrame("3", m, p))
			}
		}
	}
	for _, id := range append(append([]string(nil), oddIDs...), invalidIDs...) {
		seeds = append(seeds, callFrame(id, "dsh/candidates", `{}`), notifyFrame("$/cancelRequest", `{"id":`+id+`}`)+callFrame(id, "shutdown", `null`))
	}
	out := make([][]byte, len(seeds))
	for i, s := range seeds {
		out[i] = []byte(s)
	}
	return out
}

// recordingStream records what the server's read side saw.
type recordingStream struct {
	jsonrpc2.Stream
	mu       sync.Mutex
	readErr  error // first read error (framing, decoding, EOF)
	sawExit  bool
	sawProbe bool
}

func (r *recordingStream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	msg, n, err := r.Stream.Read(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		if r.readErr == nil {
			r.readErr = err
		}
		return msg, n, err
	}
	switch m := msg.(type) {
	case *jsonrpc2.Notification:
		if m.Method() == "exit" {
			r.sawExit = true
		}
	case *jsonrpc2.Call:
		if s, ok := m.ID().StringValue(); ok && `"`+s+`"` == probeID {
			r.sawProbe = true
		}
	}
	return msg, n, err
}

// pipeConn joins the two pipe ends the server uses.
type pipeConn struct {
	io.Reader
	io.Writer
	closers []io.Closer
}

func (p pipeConn) Close() error {
	for _, c := range p.closers {
		c.Close()
	}
	return nil
}

// wireMessage is a message the server wrote.
type wireMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// readServerFrames parses the server's output until EOF, calling got for
// each message.
func readServerFrames(r io.Reader, got func(wireMessage, []byte)) error {
	br := bufio.NewReader(r)
	for {
		n := -1
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				if err == io.EOF && line == "" && n < 0 {
					return nil
				}
				return fmt.Errorf("server output: %w", err)
			}
			line = strings.TrimRight(line, "\r\n")
			if line == "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				n, _ = strconv.Atoi(v)
			}
		}
		if n <= 0 {
			return fmt.Errorf("server wrote a frame without a valid Content-Length")
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(br, body); err != nil {
			return fmt.Errorf("server output: truncated frame: %w", err)
		}
		var m wireMessage
		if err := json.Unmarshal(body, &m); err != nil {
			return fmt.Errorf("server wrote invalid JSON %q: %w", body, err)
		}
		got(m, body)
	}
}

// atomicTime is a time set once by one goroutine and polled by another.
type atomicTime struct {
	mu sync.Mutex
	t  time.Time
}

func (a *atomicTime) set() { a.mu.Lock(); a.t = time.Now(); a.mu.Unlock() }

func (a *atomicTime) get() time.Time { a.mu.Lock(); defer a.mu.Unlock(); return a.t }

// garbageResult is what one run of runGarbage observed.
type garbageResult struct {
	exitCode      int
	readErr       error
	sawExit       bool
	sawProbe      bool
	probeAnswered bool
	panicked      string
	outputErr     error
}

// runGarbage starts a server on in-memory pipes, writes prelude+data+probe,
// waits for the probe's answer (or the end of the connection), then closes
// the input and waits for Serve to return.
func runGarbage(t testing.TB, data []byte, limit time.Duration) garbageResult {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	rec := &recordingStream{Stream: jsonrpc2.NewHeaderStream(pipeConn{Reader: inR, Writer: outW, closers: []io.Closer{inR, outW}})}
	srv := lsp.New(lsp.Options{
		DiagnosticsDelay: time.Millisecond,
		ResolveRoot:      func(flag string) (string, error) { return hardeningStore, nil },
	})
	done := make(chan int, 1)
	go func() { done <- srv.Serve(context.Background(), rec) }()

	var res garbageResult
	probeDone := make(chan struct{})
	outDone := make(chan struct{})
	var once sync.Once
	go func() {
		defer close(outDone)
		res.outputErr = readServerFrames(outR, func(m wireMessage, body []byte) {
			if m.Error != nil && strings.Contains(m.Error.Message, "panic") {
				res.panicked = string(body)
			}
			if string(m.ID) == probeID && m.Method == "" {
				res.probeAnswered = true
				once.Do(func() { close(probeDone) })
			}
		})
		io.Copy(io.Discard, outR)
	}()
	var writeDone atomicTime
	go func() {
		defer writeDone.set()
		for _, chunk := range [][]byte{[]byte(fuzzPrelude), data, []byte(probeFrame)} {
			if _, err := inW.Write(chunk); err != nil {
				return
			}
		}
	}()

	// Wait for the probe's answer. Once the server has read the probe it
	// gets the whole limit to answer; if it never reads it (the garbage
	// left the framer waiting for more bytes), give up a second after the
	// last byte was consumed.
	start := time.Now()
	served := false
wait:
	for {
		select {
		case <-probeDone:
			break wait
		case res.exitCode = <-done:
			served = true
			break wait
		case <-time.After(5 * time.Millisecond):
		}
		rec.mu.Lock()
		sawProbe := rec.sawProbe
		rec.mu.Unlock()
		wd := writeDone.get()
		switch {
		case time.Since(start) > limit:
			break wait
		case !sawProbe && !wd.IsZero() && time.Since(wd) > time.Second:
			break wait
		}
	}
	inW.Close()
	if !served {
		select {
		case res.exitCode = <-done:
		case <-time.After(limit):
			buf := make([]byte, 1<<20)
			t.Fatalf("server did not stop within %v after the input closed (input %q)\n%s", limit, truncate(data), buf[:runtime.Stack(buf, true)])
		}
	}
	outR.Close()
	<-outDone
	rec.mu.Lock()
	res.readErr, res.sawExit, res.sawProbe = rec.readErr, rec.sawExit, rec.sawProbe
	rec.mu.Unlock()
	return res
}

func truncate(b []byte) []byte {
	if len(b) > 300 {
		return b[:300]
	}
	return b
}

// checkGarbage asserts the protocol invariants on one run.
func checkGarbage(t testing.TB, data []byte, res garbageResult) {
	t.Helper()
	if res.panicked != "" {
		t.Fatalf("a handler panicked on input %q: %s", truncate(data), res.panicked)
	}
	if res.outputErr != nil && !errors.Is(res.outputErr, io.ErrClosedPipe) {
		t.Fatalf("bad server output on input %q: %v", truncate(data), res.outputErr)
	}
	if res.sawExit {
		return // the client asked the server to go away
	}
	if res.sawProbe && !res.probeAnswered {
		t.Fatalf("the server read the probe request after input %q but never answered it (read error %v)", truncate(data), res.readErr)
	}
	if !res.sawProbe && res.readErr == nil {
		t.Fatalf("the connection ended without a read error or exit before the probe (a handler failure?) on input %q", truncate(data))
	}
}

// freshConnectionServes checks that a new connection still serves a valid
// request (no global state was damaged).
func freshConnectionServes(t *testing.T) {
	a, b := jsonrpc2.NewChannelStreamPair(16)
	srv := lsp.New(lsp.Options{
		ResolveRoot: func(flag string) (string, error) { return hardeningStore, nil },
		OpenSource:  func(root string) (lsp.Source, error) { return storetest.OpenSynced(root, 0) },
	})
	done := make(chan int, 1)
	go func() { done <- srv.Serve(context.Background(), a) }()
	ed := lsptest.NewEditor(t, b)
	defer func() {
		ed.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Errorf("fresh server did not stop")
		}
	}()
	if _, err := ed.Initialize(map[string]any{"sessionsDir": hardeningStore}); err != nil {
		t.Fatalf("fresh connection: initialize: %v", err)
	}
	var items []reference.CandidateItem
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ed.Call(ctx, "dsh/candidates", map[string]any{"query": "renaming"}, &items); err != nil || len(items) != 1 || items[0].SessionID != hardeningID {
		t.Fatalf("fresh connection: dsh/candidates = %v, %+v; want the one fixture session", err, items)
	}
}

func FuzzProtocol(f *testing.F) {
	for _, s := range protocolSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Each input gets its own server and pipes, and the store is read
		// only, so the ~900 seeds run in parallel: most of a seed's time is
		// waiting (timers, goroutine hand-offs), not CPU. (T.Parallel has no
		// effect while fuzzing.)
		t.Parallel()
		res := runGarbage(t, data, 10*time.Second)
		checkGarbage(t, data, res)
		if res.readErr != nil && !errors.Is(res.readErr, io.EOF) {
			// The connection died on a framing/decoding error: a new one
			// must work.
			freshConnectionServes(t)
		}
	})
}

// TestProtocolGarbageKeepsServing pins the outcomes the fuzz target relies
// on: well-framed garbage of every kind leaves the connection serving.
func TestProtocolGarbageKeepsServing(t *testing.T) {
	open := notifyFrame("textDocument/didOpen", `{"textDocument":{"uri":"file:///f.dsh","languageId":"dsh","version":1,"text":"x"}}`)
	var wellFramed []string
	for _, m := range protocolMethods {
		if m == "shutdown" || m == "exit" {
			continue
		}
		for _, p := range badParams {
			wellFramed = append(wellFramed, callFrame("3", m, p), notifyFrame(m, p))
		}
	}
	for _, id := range oddIDs {
		if id == "null" {
			continue // a null id is a notification
		}
		wellFramed = append(wellFramed, callFrame(id, "dsh/candidates", `{}`), notifyFrame("$/cancelRequest", `{"id":`+id+`}`))
	}
	// All of it on one connection: nothing may kill it.
	data := []byte(open + strings.Join(wellFramed, ""))
	res := runGarbage(t, data, 60*time.Second)
	checkGarbage(t, data, res)
	if !res.probeAnswered {
		t.Fatalf("after %d well-framed bad messages the probe was not answered (read error %v)", len(wellFramed), res.readErr)
	}
}

// TestProtocolBrokenFramingThenFreshConnection: a byte stream whose
// framing is broken ends the connection (nothing can resynchronise it),
// never hangs it, and a new connection serves. A well-framed message that
// cannot be decoded (invalid JSON, a batch, an id beyond int64 or of the
// wrong type) may end the connection too (jsonrpc2 v1.0.1 does) or be
// answered with an error while the connection keeps serving.
func TestProtocolBrokenFramingThenFreshConnection(t *testing.T) {
	broken := []string{
		"Content-Length: -1\r\n\r\n{}",
		"Content-Length: abc\r\n\r\n{}",
		"no colon\r\n\r\n",
		"Content-Length: 1073741824\r\n\r\n{}", // declared 1 GiB, never sent
	}
	undecodable := []string{
		lspFrame(`not json`),
		lspFrame(`[{"jsonrpc":"2.0","id":1,"method":"dsh/candidates"}]`),
	}
	for _, id := range invalidIDs {
		undecodable = append(undecodable, callFrame(id, "dsh/candidates", `{}`))
	}
	for _, garbage := range append(broken, undecodable...) {
		res := runGarbage(t, []byte(garbage), 10*time.Second)
		checkGarbage(t, []byte(garbage), res)
		recovered := res.readErr == nil && res.probeAnswered
		if !recovered && (res.readErr == nil || res.exitCode != 1) {
			t.Errorf("input %q: read error %v, exit code %d; want the probe answered, or a read error and exit code 1", garbage, res.readErr, res.exitCode)
		}
		if recovered && slices.Contains(broken, garbage) {
			t.Errorf("input %q: the probe was answered after broken framing", garbage)
		}
	}
	freshConnectionServes(t)
}
