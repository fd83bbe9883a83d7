package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-lsp/dsh-lsp/contentindex"
	"github.com/dsh-lsp/dsh-lsp/mcpserver"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

const idCompacted = "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0002" // fixture B: "runbook" in its last turn

type hit struct {
	SessionID string `json:"sessionId"`
	Label     string `json:"label"`
	URI       string `json:"uri"`
	Mention   string `json:"mention"`
	Snippet   string `json:"snippet"`
}

func decodeHits(t *testing.T, s string) []hit {
	t.Helper()
	var hits []hit
	if err := json.Unmarshal([]byte(s), &hits); err != nil {
		t.Fatalf("not a JSON array of hits: %v\n%s", err, s)
	}
	return hits
}

func hitIDs(hits []hit) []string {
	ids := []string{}
	for _, h := range hits {
		ids = append(ids, h.SessionID)
	}
	return ids
}

// copyFixture copies the raw fixture store into a fresh root.
func copyFixture(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "sessions")
	if err := os.CopyFS(root, os.DirFS(storeRaw)); err != nil {
		t.Fatal(err)
	}
	return root
}

// writeCJKSession writes, as dsh would, a session whose only message is
// Chinese text.
func writeCJKSession(t *testing.T, root, id, text string) string {
	t.Helper()
	dir := filepath.Join(root, "--home-carol-lab--", id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	log := `{"type":"session","version":0,"id":` + q(id) + `,"createdAt":1786009000000,"cwd":"/home/carol/lab","delegationDepth":0}` + "\n" +
		`{"type":"turn/start","seq":0,"time":1786009000001,"data":{"turn":1}}` + "\n" +
		`{"type":"user/message","seq":1,"time":1786009000002,"data":{"content":[{"type":"text","text":` + q(text) + `}],"source":{"kind":"user"},"role":"user","id":"d0000000-0000-4000-8000-000000000001"},"surfaceOp":"append"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "session.jsonl"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func runCLIHome(t *testing.T, home string, args ...string) result {
	t.Helper()
	env, _ := cacheEnv(home)
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	var out, errb strings.Builder
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

func contentFilesIn(dir string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, "content-*"))
	return files
}

func TestCLISearch(t *testing.T) {
	home := t.TempDir()
	_, cacheDir := cacheEnv(home)
	r := runCLIHome(t, home, "search", "--sessions", storeRaw, "--limit", "5", "RUNBOOK")
	if r.code != 0 {
		t.Fatalf("search: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	hits := decodeHits(t, r.stdout)
	if len(hits) != 1 || hits[0].SessionID != idCompacted || !strings.Contains(hits[0].Snippet, "**") ||
		hits[0].URI != reference.EncodeURI(idCompacted) || hits[0].Mention != reference.FormatMention(idCompacted, &hits[0].Label) {
		t.Errorf("search RUNBOOK: %+v", hits)
	}
	files := contentFilesIn(cacheDir)
	if len(files) != 1 {
		t.Fatalf("content index files in %s: %v", cacheDir, files)
	}
	// Windows has no permission bits (Go reports 0666): the user's
	// profile directory keeps the file private there.
	if fi, err := os.Stat(files[0]); err != nil || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600) {
		t.Errorf("content index %s: %v, %v; want mode 0600", files[0], fi.Mode(), err)
	}
	// A word of tool output only: not found.
	if r := runCLIHome(t, home, "search", "--sessions", storeRaw, "b.ts"); r.code != 0 || len(decodeHits(t, r.stdout)) != 0 {
		t.Errorf("search b.ts (tool output only): %s", r.stdout)
	}
	// Off: an error, and the index kept so far is removed.
	r = runCLIHome(t, home, "search", "--sessions", storeRaw, "--no-content-index", "runbook")
	if r.code != 1 || !strings.Contains(r.stdout, string(reference.CodeInvalidConfig)) {
		t.Errorf("search --no-content-index: exit %d, %s", r.code, r.stdout)
	}
	if files := contentFilesIn(cacheDir); len(files) != 0 {
		t.Errorf("content index kept with --no-content-index: %v", files)
	}
	// --no-cache: the answer, and nothing written.
	home2 := t.TempDir()
	r = runCLIHome(t, home2, "search", "--no-cache", "--sessions", storeRaw, "runbook")
	if r.code != 0 || len(decodeHits(t, r.stdout)) != 1 {
		t.Errorf("search --no-cache: exit %d, %s", r.code, r.stdout)
	}
	if entries, _ := os.ReadDir(filepath.Join(home2, ".cache")); len(entries) != 0 {
		t.Errorf("search --no-cache wrote under the cache directory: %v", entries)
	}
	for _, bad := range [][]string{{"search"}, {"search", "a", "b"}, {"search", "--limit", "0", "x"}} {
		if r := runCLI(t, "", bad...); r.code != 1 || !strings.Contains(r.stdout, `"error"`) {
			t.Errorf("%q: exit %d, %s", bad, r.code, r.stdout)
		}
	}
}

// TestServedSearchFollowsTheStore drives the real binary over stdio: a
// session dsh writes is found by a substring of its Chinese text, and not
// after dsh deletes it.
func TestServedSearchFollowsTheStore(t *testing.T) {
	root := copyFixture(t)
	ed, _ := startServerHome(t, t.TempDir())
	if _, err := ed.Initialize(map[string]any{"sessionsDir": root}); err != nil {
		t.Fatal(err)
	}
	search := func(q string) []string {
		var hits []hit
		if err := ed.Call(context.Background(), "dsh/search", map[string]any{"query": q, "limit": 10}, &hits); err != nil {
			t.Fatalf("dsh/search %q: %v", q, err)
		}
		return hitIDs(hits)
	}
	if ids := search("runbook"); len(ids) != 1 || ids[0] != idCompacted {
		t.Fatalf("dsh/search runbook: %v", ids)
	}
	const id = "e0000000-0000-4000-8000-0000000000c1"
	dir := writeCJKSession(t, root, id, "我们讨论了量子纠缠的实验")
	start := time.Now()
	for ids := search("量子纠缠"); len(ids) != 1 || ids[0] != id; ids = search("量子纠缠") {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("the new session is not found: %v", ids)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("new session found after %v", time.Since(start))
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	for ids := search("量子纠缠"); len(ids) != 0; ids = search("量子纠缠") {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("the deleted session is still found: %v", ids)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestMCPContentSearch checks dsh_search_sessions {content: true} against
// the CLI's search, and the tool error when content search is off.
func TestMCPContentSearch(t *testing.T) {
	connect := func(content *contentindex.Index) *mcp.ClientSession {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		idx, err := sessionstore.OpenIndexed(storeRaw, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { idx.Close() })
		cwd := mcpTargetCWD
		srv, err := mcpserver.New(mcpserver.Options{Source: idx, Target: reference.Target{CWD: &cwd}, Version: "test", Content: content})
		if err != nil {
			t.Fatal(err)
		}
		st, ct := mcp.NewInMemoryTransports()
		go srv.Run(ctx, st)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	ix, err := contentindex.Open("", contentindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	cs := connect(ix)
	res := callTool(t, cs, mcpserver.ToolSearch, map[string]any{"query": "git push", "content": true})
	got := texts(t, res)
	want, code := cliJSON(t, storeRaw, "search", "--no-cache", "git push")
	if res.IsError || code != 0 || len(got) != 1 || got[0] != want {
		t.Errorf("content search over MCP:\n%v\nCLI (exit %d):\n%s", got, code, want)
	}
	if ids := hitIDs(decodeHits(t, want)); len(ids) == 0 {
		t.Errorf("CLI search git push: no hits")
	}
	// Without content, the answer is the candidates.
	res = callTool(t, cs, mcpserver.ToolSearch, map[string]any{"query": "git", "content": false})
	cands, _ := cliJSON(t, storeRaw, "candidates", "--no-cache", "git")
	if got := texts(t, res); res.IsError || len(got) != 1 || got[0] != cands {
		t.Errorf("content: false is not the candidate search: %v", got)
	}
	res = callTool(t, connect(nil), mcpserver.ToolSearch, map[string]any{"query": "git", "content": true})
	if got := texts(t, res); !res.IsError || len(got) != 1 || !strings.HasPrefix(got[0], string(reference.CodeInvalidConfig)) {
		t.Errorf("content search off: %v", got)
	}
}
