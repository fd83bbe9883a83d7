package lsp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-lsp/dsh-lsp/contentindex"
	"github.com/dsh-lsp/dsh-lsp/lsp"
	"github.com/dsh-lsp/dsh-lsp/lsp/lsptest"
	"github.com/dsh-lsp/dsh-lsp/lsp/wire"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// searchHit is one dsh/search result.
type searchHit struct {
	SessionID string  `json:"sessionId"`
	Label     string  `json:"label"`
	CWD       *string `json:"cwd"`
	CreatedAt int64   `json:"createdAt"`
	URI       string  `json:"uri"`
	Mention   string  `json:"mention"`
	Snippet   string  `json:"snippet"`
}

func search(t *testing.T, s *session, query string) ([]searchHit, error) {
	t.Helper()
	var hits []searchHit
	err := s.Call(context.Background(), "dsh/search", map[string]any{"query": query}, &hits)
	return hits, err
}

func hitOf(hits []searchHit, id string) *searchHit {
	for i := range hits {
		if hits[i].SessionID == id {
			return &hits[i]
		}
	}
	return nil
}

// candidateItems are the items of a completion list that are dsh's
// candidates: the content hits that follow them sort after "~".
func candidateItems(items []wire.CompletionItem) []wire.CompletionItem {
	var out []wire.CompletionItem
	for _, it := range items {
		if !strings.HasPrefix(it.SortText, "~") {
			out = append(out, it)
		}
	}
	return out
}

// waitFor retries cond until it holds (the store's watcher reports a write
// a few milliseconds after it) and returns how long that took.
func waitFor(t *testing.T, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("not reached within 10s: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

// cacheFiles lists the content index files under the test's cache
// directory.
func contentFiles(t *testing.T) []string {
	t.Helper()
	dir, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "dsh-lsp", "content-*"))
	return files
}

// TestSearchFollowsAppendsCompactionsAndDeletes writes the compacted
// fixture session as dsh does (first up to its compaction, then the rest)
// under a live server, then deletes it.
func TestSearchFollowsAppendsCompactionsAndDeletes(t *testing.T) {
	root := copyStore(t, storeRaw)
	logPath := filepath.Join(root, "--home-alice-proj--", idB, "session.jsonl")
	full, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cut := bytes.Index(full, []byte(`{"type":"compaction/start","seq":25,`))
	if cut < 0 {
		t.Fatal("fixture B has no compaction at seq 25")
	}
	if err := os.WriteFile(logPath, full[:cut], 0o644); err != nil {
		t.Fatal(err)
	}
	s := startInit(t, map[string]any{"sessionsDir": root})
	hits, err := search(t, s, "Postgres 16")
	if err != nil {
		t.Fatal(err)
	}
	h := hitOf(hits, idB)
	if h == nil {
		t.Fatalf("before the compaction: dsh/search Postgres 16 = %+v, want %s", hits, idB)
	}
	if h.URI != reference.EncodeURI(idB) || !strings.HasPrefix(h.Mention, "@[") || !strings.Contains(h.Snippet, "**") || h.CWD == nil || *h.CWD != "/home/alice/proj" {
		t.Errorf("hit fields: %+v", *h)
	}
	f, err := os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(full[cut:])
	f.Close()
	took := waitFor(t, "the compaction shadows Postgres 16, runbook is found", func() bool {
		gone, _ := search(t, s, "Postgres 16")
		found, _ := search(t, s, "runbook")
		return hitOf(gone, idB) == nil && hitOf(found, idB) != nil
	})
	t.Logf("append + compaction reflected after %v", took)
	if err := os.RemoveAll(filepath.Dir(logPath)); err != nil {
		t.Fatal(err)
	}
	took = waitFor(t, "the deleted session is not found", func() bool {
		found, _ := search(t, s, "runbook")
		return hitOf(found, idB) == nil
	})
	t.Logf("delete reflected after %v", took)
}

// TestCompletionAddsContentHitsAfterCandidates checks that completion
// lists dsh's candidates exactly as dsh/candidates does, then the sessions
// whose text matches, marked with the snippet.
func TestCompletionAddsContentHitsAfterCandidates(t *testing.T) {
	s := startInit(t, nil)
	uri := "file:///tmp/prompt.md"
	s.Open(uri, "see @git")
	pos := s.PosAfter(uri, "@git")
	// "git" is in A's title (a candidate) and in E's text only.
	var cands []reference.CandidateItem
	if err := s.Call(context.Background(), "dsh/candidates", map[string]any{"query": "git"}, &cands); err != nil {
		t.Fatal(err)
	}
	var list wire.CompletionList
	waitFor(t, "content hits in completion", func() bool {
		list = complete(t, s, uri, pos)
		return len(list.Items) > len(cands)
	})
	if !list.IsIncomplete {
		t.Error("the list is not incomplete")
	}
	for i, c := range cands {
		var data struct {
			SessionID string `json:"sessionId"`
			Snippet   string `json:"snippet"`
		}
		json.Unmarshal(list.Items[i].Data, &data)
		if data.SessionID != c.SessionID || data.Snippet != "" || strings.HasPrefix(list.Items[i].Detail, "in text:") {
			t.Errorf("item %d is %s (%q), want candidate %s unchanged", i, data.SessionID, list.Items[i].Detail, c.SessionID)
		}
	}
	listed := map[string]bool{}
	for _, c := range cands {
		listed[c.SessionID] = true
	}
	foundE := false
	for _, it := range list.Items[len(cands):] {
		var data struct {
			SessionID string `json:"sessionId"`
			Snippet   string `json:"snippet"`
		}
		json.Unmarshal(it.Data, &data)
		if listed[data.SessionID] {
			t.Errorf("content hit %s is already a candidate", data.SessionID)
		}
		if !strings.HasPrefix(it.Detail, "in text: ") || data.Snippet == "" {
			t.Errorf("content hit %s not marked: detail %q", data.SessionID, it.Detail)
		}
		if it.SortText <= list.Items[len(cands)-1].SortText {
			t.Errorf("content hit %s sorts before the candidates (%q)", data.SessionID, it.SortText)
		}
		foundE = foundE || data.SessionID == idE
		if data.SessionID == idE {
			var resolved wire.CompletionItem
			if err := s.Call(context.Background(), "completionItem/resolve", it, &resolved); err != nil {
				t.Fatal(err)
			}
			if resolved.Documentation == nil || !strings.Contains(resolved.Documentation.Value, data.Snippet) {
				t.Errorf("resolved documentation does not show the snippet: %+v", resolved.Documentation)
			}
		}
	}
	if !foundE {
		t.Errorf("session E (git in its text only) is not offered: %+v", list.Items)
	}
}

func TestContentSearchOffKeepsNothing(t *testing.T) {
	t.Run("setting", func(t *testing.T) {
		s := startInit(t, map[string]any{"sessionsDir": storeRaw, "contentSearch": false})
		if _, err := search(t, s, "runbook"); lsptest.RPCError(err) == nil {
			t.Errorf("dsh/search with contentSearch off: %v, want an error", err)
		}
		uri := "file:///tmp/p.md"
		s.Open(uri, "@runbook")
		if list := complete(t, s, uri, s.PosAfter(uri, "@runbook")); len(list.Items) != 0 {
			t.Errorf("completion with contentSearch off: %d items, want none (no candidate matches)", len(list.Items))
		}
		if files := contentFiles(t); len(files) != 0 {
			t.Errorf("content index files written: %v", files)
		}
	})
	t.Run("flag", func(t *testing.T) {
		s := start(t, lsp.Options{NoContentIndex: true})
		if _, err := s.Initialize(map[string]any{"sessionsDir": storeRaw}); err != nil {
			t.Fatal(err)
		}
		s.awaitIndexed(t)
		if _, err := search(t, s, "runbook"); lsptest.RPCError(err) == nil {
			t.Errorf("dsh/search with --no-content-index: %v, want an error", err)
		}
		if files := contentFiles(t); len(files) != 0 {
			t.Errorf("content index files written: %v", files)
		}
	})
	t.Run("turned off later", func(t *testing.T) {
		s := startInit(t, nil)
		if hits, err := search(t, s, "runbook"); err != nil || hitOf(hits, idB) == nil {
			t.Fatalf("dsh/search runbook: %+v, %v", hits, err)
		}
		if len(contentFiles(t)) == 0 {
			t.Fatal("no content index file while on")
		}
		s.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"dsh": map[string]any{"contentSearch": false}}})
		waitFor(t, "the content index file removed", func() bool { return len(contentFiles(t)) == 0 })
		if _, err := search(t, s, "runbook"); lsptest.RPCError(err) == nil {
			t.Errorf("dsh/search after turning it off: %v, want an error", err)
		}
	})
}

// gatedSource holds every content index sync that reads it at its first
// read (the listing) until release is closed: the state of a server whose
// first sync after a restart is still reading and indexing the store.
type gatedSource struct {
	contentindex.Source
	entered     chan struct{}
	enteredOnce sync.Once
	release     chan struct{}
}

func (g *gatedSource) SessionVersions(ctx context.Context) (iter.Seq[sessionstore.SessionVersion], error) {
	g.enteredOnce.Do(func() { close(g.entered) })
	select {
	case <-g.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.Source.SessionVersions(ctx)
}

// startHeldContentSync starts and initializes a server on the fixture
// store and returns once its first content index sync is held (inside
// the sync, under the index's lock); release lets it go on.
func startHeldContentSync(t *testing.T) (*session, func()) {
	t.Helper()
	g := &gatedSource{entered: make(chan struct{}), release: make(chan struct{})}
	s := start(t, lsp.Options{}, func(srv *lsp.Server) {
		lsp.WrapContentSync(srv, func(src contentindex.Source) contentindex.Source {
			g.Source = src
			return g
		})
	})
	var once sync.Once
	release := func() { once.Do(func() { close(g.release) }) }
	t.Cleanup(release)
	if _, err := s.Initialize(map[string]any{"sessionsDir": storeRaw}); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	s.awaitIndexed(t)
	select {
	case <-g.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the content index sync did not start within 10s")
	}
	return s, release
}

// TestCompletionAnswersWhileContentIndexSyncs holds the content index's
// first sync (which reads and indexes every changed session: minutes on a
// large store) and asks for a completion whose query is long enough for
// content search: it answers with dsh's candidates at once, and the
// content hits follow once the sync is done.
func TestCompletionAnswersWhileContentIndexSyncs(t *testing.T) {
	s, release := startHeldContentSync(t)
	defer release()
	uri := "file:///tmp/prompt.md"
	s.Open(uri, "see @git")
	var cands []reference.CandidateItem
	if err := s.Call(context.Background(), "dsh/candidates", map[string]any{"query": "git"}, &cands); err != nil {
		t.Fatal(err)
	}
	// The guard only turns a hang into a failure: the answer is due
	// without waiting for the held sync at all.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var list wire.CompletionList
	err := s.Call(ctx, "textDocument/completion", map[string]any{
		"textDocument": map[string]any{"uri": uri},
		"position":     s.PosAfter(uri, "@git"),
	}, &list)
	if ctx.Err() != nil {
		t.Fatal("completion did not answer while the content index sync was running")
	}
	if err != nil {
		t.Fatalf("completion: %v", err)
	}
	if len(cands) == 0 || len(list.Items) != len(cands) {
		t.Errorf("completion during the sync has %d items, want dsh's %d candidates and no content hits", len(list.Items), len(cands))
	}
	release()
	waitFor(t, "content hits in completion after the sync", func() bool {
		return len(complete(t, s, uri, s.PosAfter(uri, "@git")).Items) > len(cands)
	})
}

// TestTurningContentSearchOffStopsASync turns content search off while
// the content index's sync is held: the sync is cancelled, so closing the
// index (on the connection's read goroutine) does not wait for it, and
// the next request is answered.
func TestTurningContentSearchOffStopsASync(t *testing.T) {
	s, _ := startHeldContentSync(t)
	s.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"dsh": map[string]any{"contentSearch": false}}})
	// The guard only turns a hang into a failure.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var cands []reference.CandidateItem
	err := s.Call(ctx, "dsh/candidates", map[string]any{"query": "git"}, &cands)
	if ctx.Err() != nil {
		t.Fatal("no answer after turning content search off during a content index sync")
	}
	if err != nil || len(cands) == 0 {
		t.Fatalf("dsh/candidates git: %+v, %v", cands, err)
	}
	waitFor(t, "the content index file removed", func() bool { return len(contentFiles(t)) == 0 })
}
