package lsp_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-lsp/dsh-lsp/lsp"
)

// TestCompletionAnswersAreRecycled: each completion answer's buffer goes
// back to its pool once its response is written (jsonrpc2 writes a
// response with the request's context, which the stream's Write matches),
// and answers asked at once, their buffers recycled between them, are each
// the answer to their own query.
func TestCompletionAnswersAreRecycled(t *testing.T) {
	var srv *lsp.Server
	s := start(t, lsp.Options{}, func(x *lsp.Server) { srv = x })
	// Without content search, whose hits join the answers once its index
	// is built: an answer is then the same asked alone or at once.
	if _, err := s.Initialize(map[string]any{"sessionsDir": storeRaw, "contentSearch": false}); err != nil {
		t.Fatal(err)
	}
	s.awaitIndexed(t)
	queries := []string{"", "Ren", "bob", "2d51", "zzzz", "a", "What"}
	uris := make([]string, len(queries))
	for i, q := range queries {
		uris[i] = fmt.Sprintf("file:///home/alice/proj/q%d.dsh", i)
		s.Open(uris[i], "@"+q)
	}
	ask := func(i int) string {
		list := complete(t, s, uris[i], s.Pos(uris[i], len(queries[i])+1))
		var b strings.Builder
		for _, it := range list.Items {
			b.WriteString(it.Label + "|" + it.TextEdit.NewText + "|" + string(it.Data) + "\n")
		}
		return b.String()
	}
	alone := make([]string, len(queries))
	for i := range queries {
		alone[i] = ask(i)
	}
	if alone[0] == "" || alone[1] == alone[0] {
		t.Fatalf("the queries' answers do not tell them apart: %q", alone[:2])
	}
	awaitReturned(t, srv, 0, int64(len(queries)))
	var wg sync.WaitGroup
	for round := range 20 {
		for i := range queries {
			wg.Go(func() {
				if got := ask(i); got != alone[i] {
					t.Errorf("round %d, query %q: answered\n%s\nwant\n%s", round, queries[i], got, alone[i])
				}
			})
		}
	}
	wg.Wait()
	// Answers written while more were pending than lentAnswers tracks are
	// left to the collector; asked one at a time again, each comes back.
	// The burst's last give-backs may follow the client's reading of their
	// responses: count from when none is outstanding.
	awaitNoneLent(t, srv)
	before := lsp.ReturnedAnswers(srv)
	for i := range queries {
		if got := ask(i); got != alone[i] {
			t.Errorf("after the burst, query %q: answered\n%s\nwant\n%s", queries[i], got, alone[i])
		}
	}
	awaitReturned(t, srv, before, int64(len(queries)))
}

// awaitNoneLent waits until every answer buffer lent has been given back
// or dropped.
func awaitNoneLent(t *testing.T, srv *lsp.Server) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for lsp.LentAnswers(srv) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d answer buffers still lent 10 s after their responses were read", lsp.LentAnswers(srv))
		}
		time.Sleep(time.Millisecond)
	}
}

// awaitReturned waits until want answer buffers more than before have
// been given back: the stream gives one back after writing its response,
// which the client may read first.
func awaitReturned(t *testing.T, srv *lsp.Server, before, want int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := lsp.ReturnedAnswers(srv) - before
		if n == want {
			return
		}
		if n > want || time.Now().After(deadline) {
			t.Fatalf("%d answer buffers given back after %d answers", n, want)
		}
		time.Sleep(time.Millisecond)
	}
}
