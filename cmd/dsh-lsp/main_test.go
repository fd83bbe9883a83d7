package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.uber.org/zap/zapcore"

	"github.com/dsh-lsp/dsh-lsp/internal/gcgoal"
	"github.com/dsh-lsp/dsh-lsp/lsp/lsptest"
	"github.com/dsh-lsp/dsh-lsp/lsp/wire"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// binary is the dsh-lsp built for these tests.
var binary string

const storeRaw = "../../testdata/fixtures/store-raw"

const (
	idA = "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0001"
	idB = "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0002"
	idG = "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0007"
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dsh-lsp-bin-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "dsh-lsp")
	if prebuilt := os.Getenv("DSH_LSP_TEST_BIN"); prebuilt != "" {
		// A binary built for this test's platform by the caller: the
		// Windows tests under Wine have no go command to build one.
		binary = prebuilt
	} else if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		// Built before XDG_CACHE_HOME moves: the go command keeps its build
		// cache there by default, and an empty one costs a minute of
		// rebuilding.
		os.RemoveAll(dir)
		panic("go build: " + err.Error() + "\n" + string(out))
	}
	// Servers started by these tests keep their index cache in the
	// temporary directory, not in the user's cache directory.
	os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	stdout, stderr string
	code           int
}

// runCLI runs the binary with a clean environment (no real store).
func runCLI(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return runCLIWith(t, cleanEnv(t.TempDir()), stdin, args...)
}

// runCLIWith runs the binary with the environment env.
func runCLIWith(t *testing.T, env []string, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{out.String(), errb.String(), code}
}

// fixturePrompt returns the expected prompt of a fixture session at budget b.
func fixturePrompt(t *testing.T, id string, b int64) (label, prompt string) {
	t.Helper()
	raw, err := os.ReadFile("../../testdata/fixtures/expected/store-raw.expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var exp struct {
		Sessions []struct {
			Header     struct{ ID string } `json:"header"`
			Label      string              `json:"label"`
			References []struct {
				MaxReferenceBytes int64  `json:"maxReferenceBytes"`
				Prompt            string `json:"prompt"`
			} `json:"references"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal(raw, &exp); err != nil {
		t.Fatal(err)
	}
	for _, s := range exp.Sessions {
		if s.Header.ID != id {
			continue
		}
		for _, r := range s.References {
			if r.MaxReferenceBytes == b {
				return s.Label, r.Prompt
			}
		}
	}
	t.Fatalf("no expected prompt for %s at %d", id, b)
	return "", ""
}

func TestCLIPrepareMatchesFixture(t *testing.T) {
	for _, b := range []int64{65536, 700, 360} {
		label, prompt := fixturePrompt(t, idB, b)
		text := "see " + reference.FormatMention(idB, &label)
		for _, viaStdin := range []bool{false, true} {
			args := []string{"prepare", "--sessions", storeRaw, "--max-reference-bytes", jsonNum(b)}
			stdin := ""
			if viaStdin {
				args, stdin = append(args, "-"), text
			} else {
				args = append(args, text)
			}
			r := runCLI(t, stdin, args...)
			if r.code != 0 {
				t.Fatalf("prepare B=%d: exit %d, %s %s", b, r.code, r.stdout, r.stderr)
			}
			var got struct {
				Content        string `json:"content"`
				ContextMessage struct {
					Content []struct{ Text string } `json:"content"`
				} `json:"contextMessage"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
				t.Fatalf("prepare output is not JSON: %v\n%s", err, r.stdout)
			}
			if got.Content != "see @"+label || len(got.ContextMessage.Content) != 1 || got.ContextMessage.Content[0].Text != prompt {
				t.Errorf("prepare B=%d stdin=%v:\n got %q\nwant %q", b, viaStdin, got.ContextMessage.Content, prompt)
			}
			if strings.Contains(r.stdout, `\u0026`) || strings.Contains(r.stdout, `\u003e`) {
				t.Errorf("output is HTML-escaped: %s", r.stdout)
			}
		}
	}
}

func jsonNum(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestCLIErrors(t *testing.T) {
	tests := []struct {
		args []string
		code reference.Code
		msg  string
	}{
		{[]string{"uri", "decode", "dsh-session:xx"}, reference.CodeInvalidReference, `invalid session reference URI "dsh-session:xx"`},
		{[]string{"prepare", "--sessions", storeRaw, "@[x](dsh-session:IiJ)"}, reference.CodeInvalidReference, "invalid session reference URI"},
		{[]string{"prepare", "--sessions", storeRaw, "--target-id", idA, reference.FormatMention(idA, nil)}, reference.CodeSelfReference, "cannot reference itself"},
		{[]string{"prepare", "--sessions", storeRaw, "--max-references", "1", reference.FormatMention(idA, nil) + reference.FormatMention(idB, nil)}, reference.CodeTooMany, "at most 1 sessions"},
		{[]string{"prepare", "--sessions", storeRaw, reference.FormatMention("missing", nil)}, reference.CodeReadFailed, `session "missing" not found`},
		{[]string{"prepare", "--sessions", storeRaw, "--max-reference-bytes", "16", reference.FormatMention(idA, nil)}, reference.CodeBudgetExceeded, "budget"},
		{[]string{"prepare", "--sessions", storeRaw, "--max-references", "4", "x"}, reference.CodeInvalidConfig, "maxReferences"},
		{[]string{"candidates", "--sessions", storeRaw, "--candidate-limit", "x"}, reference.CodeInvalidConfig, "candidateLimit"},
		{[]string{"candidates", "--sessions", storeRaw, "--limit", "0"}, reference.CodeInvalidReference, "candidate limit"},
		{[]string{"mentions", "see dsh-session:IiJ"}, reference.CodeInvalidReference, `"dsh-session:IiJ"`},
		{[]string{"bogus"}, reference.CodeInvalidConfig, "unknown command"},
		{[]string{"prepare", "--nope", "x"}, reference.CodeInvalidConfig, "nope"},
		{[]string{"demo", "extra"}, reference.CodeInvalidConfig, "demo takes no arguments"},
	}
	for _, tt := range tests {
		r := runCLI(t, "", tt.args...)
		var got struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if r.code != 1 || json.Unmarshal([]byte(r.stdout), &got) != nil || got.Error.Code != string(tt.code) || !strings.Contains(got.Error.Message, tt.msg) {
			t.Errorf("%q: exit %d stdout %q, want exit 1 and %s containing %q", tt.args, r.code, r.stdout, tt.code, tt.msg)
		}
		if lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n"); len(lines) != 1 || lines[0] == "" {
			t.Errorf("%q: stderr should be one line, got %q", tt.args, r.stderr)
		}
	}
}

func TestCLIURIAndMentions(t *testing.T) {
	r := runCLI(t, "", "uri", "encode", "unicode/引号\"/slash\\/line\n")
	if r.code != 0 || strings.TrimSpace(r.stdout) != `{"uri":"dsh-session:InVuaWNvZGUv5byV5Y-3XCIvc2xhc2hcXC9saW5lXG4i"}` {
		t.Errorf("uri encode: %d %q", r.code, r.stdout)
	}
	r = runCLI(t, "", "uri", "decode", "dsh-session:Ijx0YWc-JiI")
	if r.code != 0 || strings.TrimSpace(r.stdout) != `{"sessionId":"<tag>&"}` {
		t.Errorf("uri decode: %d %q", r.code, r.stdout)
	}
	// A lone surrogate id keeps its \udxxx escape on output (not U+FFFD).
	r = runCLI(t, "", "uri", "decode", "dsh-session:Ilx1ZDgwMHgi")
	if r.code != 0 || strings.TrimSpace(r.stdout) != `{"sessionId":"\ud800x"}` {
		t.Errorf("uri decode lone surrogate: %d %q", r.code, r.stdout)
	}
	text := "compare @[源\\]会话](dsh-session:InNyYyI) and dsh-session:InNyYyI and dsh-session:InNyYyI"
	for _, stdin := range []bool{false, true} {
		args, in := []string{"mentions", text}, ""
		if stdin {
			args, in = []string{"mentions", "-"}, text
		}
		r = runCLI(t, in, args...)
		want := `{"text":"compare @源]会话 and @src and @src","references":[{"sessionId":"src","label":"源]会话"},{"sessionId":"src","label":"src"},{"sessionId":"src","label":"src"}]}`
		if r.code != 0 || strings.TrimSpace(r.stdout) != want {
			t.Errorf("mentions: %d\n got %s\nwant %s", r.code, r.stdout, want)
		}
	}
}

func TestCLICandidates(t *testing.T) {
	r := runCLI(t, "", "candidates", "--sessions", storeRaw, "--target-cwd", "/home/bob/scratch", "--limit", "2")
	var items []struct {
		SessionID, Label, URI, Mention string
		CWD                            *string
		CreatedAt                      int64
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &items) != nil {
		t.Fatalf("candidates: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if len(items) != 2 || items[0].SessionID != idG || items[1].CWD != nil || items[0].URI != reference.EncodeURI(idG) ||
		items[0].Mention != reference.FormatMention(idG, &items[0].Label) || items[0].CreatedAt != 1786003000000 {
		t.Errorf("candidates = %+v", items)
	}
	// query after flags, flags after query
	r = runCLI(t, "", "candidates", "GIT", "--sessions", storeRaw)
	if r.code != 0 || !strings.Contains(r.stdout, `"label":"Renaming git branches"`) || strings.Count(r.stdout, "sessionId") != 1 {
		t.Errorf("candidates GIT: %s", r.stdout)
	}
}

func TestCLICheck(t *testing.T) {
	dir := t.TempDir()
	clean := filepath.Join(dir, "clean.md")
	warn := filepath.Join(dir, "warn.md")
	bad := filepath.Join(dir, "bad.md")
	os.WriteFile(clean, []byte("see "+reference.FormatMention(idA, nil)+"\n"), 0o644)
	os.WriteFile(warn, []byte("é\n  "+reference.FormatMention("gone", nil)+"\n"), 0o644)
	os.WriteFile(bad, []byte("héllo @[x](dsh-session:nope) "+reference.FormatMention(idB, nil)+"\n"), 0o644)

	r := runCLI(t, "", "check", "--sessions", storeRaw, clean)
	if r.code != 0 || r.stdout != "" {
		t.Errorf("clean: %d %q", r.code, r.stdout)
	}
	r = runCLI(t, "", "check", "--sessions", storeRaw, warn)
	want := warn + `:2:3: warning: unknown session "gone": the session store does not list it [unknown-session]` + "\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("warn: %d\n got %q\nwant %q", r.code, r.stdout, want)
	}
	r = runCLI(t, "", "check", "--sessions", storeRaw, "--target-id", idB, clean, bad)
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	re := regexp.MustCompile(`^(.+):(\d+):(\d+): (error|warning): (.+) \[([a-z-]+)\]$`)
	if r.code != 1 || len(lines) != 2 {
		t.Fatalf("bad: exit %d, %q", r.code, r.stdout)
	}
	m0, m1 := re.FindStringSubmatch(lines[0]), re.FindStringSubmatch(lines[1])
	if m0 == nil || m0[1] != bad || m0[2] != "1" || m0[3] != "8" || m0[6] != "invalid-uri" ||
		m1 == nil || m1[3] != "31" || m1[6] != "self-reference" {
		t.Errorf("bad: %q", lines)
	}
	r = runCLI(t, "", "check", filepath.Join(dir, "missing.md"))
	if r.code != 1 || !strings.Contains(r.stdout, `"code":"SESSION_REFERENCE_READ_FAILED"`) {
		t.Errorf("missing file: %d %q", r.code, r.stdout)
	}
}

func TestDemo(t *testing.T) {
	r := runCLI(t, "", "demo")
	if r.code != 0 {
		t.Fatalf("demo: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"Compare with @git",
		"Renaming git branches  /home/alice/proj",
		"@[Renaming git branches](dsh-session:IjBiNmY4YTRlLTJkNTEtNGM4ZS05ZjBhLTVkM2MyYjFhMDAwMSI)",
		"[invalid-uri]", "quick fix: Replace with canonical URI dsh-session:InNyYyI",
		"Compare with @Renaming git branches and tell me",
		"│ ## Referenced sessions", "│ </referenced-sessions>",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
}

func TestVersion(t *testing.T) {
	r := runCLI(t, "", "version")
	if r.code != 0 || !strings.Contains(r.stdout, `"name":"dsh-lsp"`) {
		t.Errorf("version: %d %q", r.code, r.stdout)
	}
}

// rwc joins a subprocess's stdout and stdin.
type rwc struct {
	io.ReadCloser
	io.WriteCloser
}

func (c rwc) Close() error { c.WriteCloser.Close(); return c.ReadCloser.Close() }

// startServer runs the binary as an LSP server over stdio.
func startServer(t *testing.T, args ...string) (*lsptest.Editor, *exec.Cmd, *bytes.Buffer) {
	t.Helper()
	return startServerEnv(t, cleanEnv(t.TempDir()), args...)
}

// startServerEnv runs the binary with args and the environment env, as an
// LSP server over its stdin and stdout; it is killed when the test ends,
// and its stderr is logged if the test failed.
func startServerEnv(t *testing.T, env []string, args ...string) (*lsptest.Editor, *exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("server stderr:\n%s", stderr.String())
		}
	})
	ed := lsptest.NewEditor(t, jsonrpc2.NewHeaderStream(rwc{stdout, stdin}))
	return ed, cmd, &stderr
}

func waitExit(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(10 * time.Second):
		t.Fatal("server did not exit")
	}
	return -1
}

// TestServeStdio runs the main editor scenario against the real binary.
func TestServeStdio(t *testing.T) {
	t.Parallel()
	for _, enc := range []string{"utf-16", "utf-8", "utf-32"} {
		t.Run(enc, func(t *testing.T) {
			t.Parallel()
			ed, cmd, stderr := startServer(t, "--stdio", "--log-level", "debug")
			abs, _ := filepath.Abs(storeRaw)
			if _, err := ed.Initialize(map[string]any{"sessionsDir": abs}, enc); err != nil {
				t.Fatal(err)
			}
			// Until the first indexing pass ends completion answers from
			// what is indexed so far; dsh/candidates waits for the index.
			if err := ed.Call(context.Background(), "dsh/candidates", map[string]any{}, nil); err != nil {
				t.Fatal(err)
			}
			uri := "file:///home/alice/proj/prompt.dsh"
			ed.Open(uri, "Ünïcode 🙂 (")
			ed.Append(uri, "@git")
			var list wire.CompletionList
			if err := ed.Call(context.Background(), "textDocument/completion", map[string]any{
				"textDocument": map[string]any{"uri": uri}, "position": ed.Pos(uri, len(ed.Text(uri)))}, &list); err != nil {
				t.Fatal(err)
			}
			// dsh's one candidate, then maybe content hits (sorted after "~":
			// E's text says "git" too).
			cands := 0
			for _, it := range list.Items {
				if !strings.HasPrefix(it.SortText, "~") {
					cands++
				}
			}
			if cands != 1 || list.Items[0].TextEdit == nil {
				t.Fatalf("completion: %+v", list)
			}
			ed.ApplyEdit(uri, *list.Items[0].TextEdit)
			label := "Renaming git branches"
			if got, want := ed.Text(uri), "Ünïcode 🙂 ("+reference.FormatMention(idA, &label); got != want {
				t.Fatalf("accepted: %q, want %q", got, want)
			}
			ed.Await(lsptest.DiagnosticCodes(uri))
			ed.Append(uri, ") @[x](dsh-session:IiJ)")
			ed.Await(lsptest.DiagnosticCodes(uri, "invalid-uri"))
			n := len(ed.Text(uri))
			ed.Replace(uri, n-len(" @[x](dsh-session:IiJ)"), n, "")
			ed.Await(lsptest.DiagnosticCodes(uri))

			var prep struct {
				Content        string `json:"content"`
				ContextMessage struct {
					Content []struct{ Text string } `json:"content"`
				} `json:"contextMessage"`
			}
			if err := ed.Call(context.Background(), "workspace/executeCommand", map[string]any{"command": "dsh.prepare",
				"arguments": []any{map[string]any{"textDocument": map[string]any{"uri": uri}}}}, &prep); err != nil {
				t.Fatal(err)
			}
			_, prompt := fixturePrompt(t, idA, 65536)
			if prep.Content != "Ünïcode 🙂 (@Renaming git branches)" || len(prep.ContextMessage.Content) != 1 {
				t.Fatalf("prepare: %+v", prep)
			}
			// The fixture prompt uses the session's title as label.
			if got := prep.ContextMessage.Content[0].Text; got != prompt {
				t.Errorf("prepare prompt:\n got %q\nwant %q", got, prompt)
			}
			if err := ed.Shutdown(); err != nil {
				t.Fatal(err)
			}
			if code := waitExit(t, cmd); code != 0 {
				t.Errorf("exit code %d after shutdown+exit, want 0\n%s", code, stderr)
			}
			if !strings.Contains(stderr.String(), "initialize") {
				t.Errorf("no logs on stderr: %q", stderr)
			}
		})
	}
}

func TestServeExitWithoutShutdown(t *testing.T) {
	ed, cmd, _ := startServer(t)
	if _, err := ed.Initialize(map[string]any{"sessionsDir": "/nonexistent-store"}); err != nil {
		t.Fatal(err)
	}
	ed.Notify("exit", nil)
	if code := waitExit(t, cmd); code != 1 {
		t.Errorf("exit without shutdown: %d, want 1", code)
	}
}

func TestServeClientDisconnects(t *testing.T) {
	for i := 0; i < 5; i++ {
		ed, cmd, _ := startServer(t, "serve", "--sessions", storeRaw)
		if _, err := ed.Initialize(nil); err != nil {
			t.Fatal(err)
		}
		// Go away while the server is writing (diagnostics, progress): the
		// write fails, the server must still exit with 1 (not SIGPIPE).
		ed.Open("file:///p.dsh", "see @[x](dsh-session:bad)")
		ed.Close()
		if code := waitExit(t, cmd); code != 1 {
			t.Fatalf("lost client (run %d): exit %d, want 1", i, code)
		}
	}
}

func TestServeBadSettings(t *testing.T) {
	ed, _, _ := startServer(t)
	_, err := ed.Initialize(map[string]any{"maxReferences": 9})
	if e := lsptest.RPCError(err); e == nil || e.Code != jsonrpc2.InvalidParams || !strings.Contains(e.Message, "maxReferences") {
		t.Errorf("bad initializationOptions: %v", err)
	}
}

func TestServeTCP(t *testing.T) {
	cmd := exec.Command(binary, "--listen", "127.0.0.1:0", "--sessions", storeRaw)
	cmd.Env = cleanEnv(t.TempDir())
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	sc := bufio.NewScanner(stderr)
	addr := ""
	for sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "dsh-lsp listening on "); ok {
			addr = a
			break
		}
	}
	go io.Copy(io.Discard, stderr)
	if addr == "" {
		t.Fatal("no listen address printed")
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	ed := lsptest.NewEditor(t, jsonrpc2.NewHeaderStream(c))
	defer ed.Close()
	if _, err := ed.Initialize(nil); err != nil {
		t.Fatal(err)
	}
	var items []map[string]any
	if err := ed.Call(context.Background(), "dsh/candidates", map[string]any{"query": "git"}, &items); err != nil || len(items) != 1 {
		t.Fatalf("candidates over TCP: %v %v", err, items)
	}
	if err := ed.Shutdown(); err != nil {
		t.Fatal(err)
	}
}

func TestNewZapLoggerLevels(t *testing.T) {
	tests := []struct {
		level string
		ok    bool
	}{
		{"debug", true}, {"info", true}, {"warn", true}, {"error", true},
		{"fatal", false}, {"panic", false}, {"dpanic", false}, {"INFO", false}, {"", false}, {"verbose", false},
	}
	for _, tt := range tests {
		zl, closeLog, err := newZapLogger("", tt.level, io.Discard)
		if (err == nil) != tt.ok {
			t.Errorf("--log-level %q: err %v, want ok=%v", tt.level, err, tt.ok)
		}
		if err == nil {
			if !zl.Core().Enabled(zapcore.ErrorLevel) {
				t.Errorf("--log-level %q drops errors", tt.level)
			}
			closeLog()
		} else if !strings.Contains(err.Error(), "--log-level") {
			t.Errorf("--log-level %q: error %q does not name the flag", tt.level, err)
		}
	}
}

// TestGCPercentUnlessGOGC: a one-shot command runs its collector at
// gcPercent; a server at servingGCPercent, and at gcPercent while bulk
// work runs; unless GOGC says otherwise (the runtime has applied it).
func TestGCPercentUnlessGOGC(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	noGOGC := func(string) string { return "" }
	for _, tt := range []struct {
		args []string
		want int
	}{
		{[]string{"candidates", "x"}, gcPercent},
		{[]string{"--help"}, gcPercent},
		{nil, servingGCPercent},
		{[]string{"--stdio"}, servingGCPercent},
		{[]string{"serve", "--stdio"}, servingGCPercent},
		{[]string{"mcp"}, servingGCPercent},
	} {
		debug.SetGCPercent(100)
		tuneGC(noGOGC, tt.args)
		if got := debug.SetGCPercent(100); got != tt.want {
			t.Errorf("%q without GOGC: GC percent %d, want %d", tt.args, got, tt.want)
		}
	}
	tuneGC(noGOGC, []string{"serve"})
	done := gcgoal.Bulk()
	// At least gcPercent: more while the live heap is small (gcgoal).
	if got := debug.SetGCPercent(gcPercent); got < gcPercent {
		t.Errorf("a server during bulk work: GC percent %d, want %d or more", got, gcPercent)
	}
	done()
	if got := debug.SetGCPercent(100); got != servingGCPercent {
		t.Errorf("a server after bulk work: GC percent %d, want %d", got, servingGCPercent)
	}
	for _, args := range [][]string{{"candidates"}, {"serve"}} {
		tuneGC(func(k string) string { return map[string]string{"GOGC": "100"}[k] }, args)
		if got := debug.SetGCPercent(100); got != 100 {
			t.Errorf("%q with GOGC=100: GC percent %d, want 100 (the user's)", args, got)
		}
	}
}
