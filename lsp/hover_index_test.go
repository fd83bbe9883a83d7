package lsp_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/lsp"
	"github.com/dsh-lsp/dsh-lsp/lsp/wire"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// summarizingSource is the index as the server sees it, counting surface
// reads.
type summarizingSource struct {
	*sessionstore.Indexed
	reads atomic.Int32
}

func (s *summarizingSource) ReadSurface(ctx context.Context, id string) (*reference.Surface, error) {
	s.reads.Add(1)
	return s.Indexed.ReadSurface(ctx, id)
}

// readingSource hides the index's SurfaceSummary: every hover reads.
type readingSource struct{ lsp.Source }

func (readingSource) SurfaceSummary(context.Context, string) (*reference.SurfaceSummary, bool) {
	return nil, false
}

// startIndexed starts a server over storeRaw's index (memory only) with
// maxReferenceBytes budget, the source wrapped by wrap.
func startIndexed(t *testing.T, budget int64, wrap func(*sessionstore.Indexed) lsp.Source) *session {
	t.Helper()
	s := start(t, lsp.Options{OpenSource: func(root string) (lsp.Source, error) {
		x, err := sessionstore.OpenIndexed(root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache})
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { x.Close() })
		if err := x.Wait(context.Background()); err != nil {
			return nil, err
		}
		return wrap(x), nil
	}})
	if _, err := s.Initialize(map[string]any{"sessionsDir": storeRaw, "maxReferenceBytes": budget}); err != nil {
		t.Fatal(err)
	}
	return s
}

func hoverText(t *testing.T, s *session, uri string, at int) string {
	t.Helper()
	var h *wire.Hover
	if err := s.Call(context.Background(), "textDocument/hover", map[string]any{
		"textDocument": map[string]any{"uri": uri}, "position": s.Pos(uri, at)}, &h); err != nil {
		t.Fatal(err)
	}
	if h == nil {
		t.Fatalf("no hover at %d of %q", at, s.Text(uri))
	}
	return h.Contents.Value
}

// TestHoverFromTheIndexEqualsTheRead checks that a hover answered from the
// index's surface summary, with no read of the session, has exactly the
// text of one answered from a read of the session, for every session of
// the fixture store, under budgets where everything fits, where old
// messages are dropped, and where a text would be cut (then the hover
// reads), with and without a label of the mention's own.
func TestHoverFromTheIndexEqualsTheRead(t *testing.T) {
	x, err := sessionstore.OpenIndexed(storeRaw, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	headers, err := x.ListSessions(context.Background())
	x.Close()
	if err != nil || len(headers) < 5 {
		t.Fatalf("fixture store: %d sessions, %v", len(headers), err)
	}
	fromIndex := 0
	for _, budget := range []int64{65536, 700, 250} {
		var src *summarizingSource
		summarized := startIndexed(t, budget, func(x *sessionstore.Indexed) lsp.Source {
			src = &summarizingSource{Indexed: x}
			return src
		})
		read := startIndexed(t, budget, func(x *sessionstore.Indexed) lsp.Source { return readingSource{x} })
		for i, h := range headers {
			for _, label := range []*string{nil, ptr("plan")} {
				uri := fmt.Sprintf("file:///h-%d-%d-%v.dsh", budget, i, label != nil)
				text := "see " + reference.FormatMention(h.ID, label) + " now"
				for _, s := range []*session{summarized, read} {
					s.Open(uri, text)
				}
				before := src.reads.Load()
				got := hoverText(t, summarized, uri, 6)
				if src.reads.Load() == before {
					fromIndex++
				}
				if want := hoverText(t, read, uri, 6); got != want {
					t.Errorf("budget %d, session %d (%s), label %v:\nfrom the index:\n%s\nfrom a read:\n%s", budget, i, h.ID, label, got, want)
				}
			}
		}
	}
	if fromIndex < len(headers) {
		t.Errorf("only %d hovers were answered without a read", fromIndex)
	}
	t.Logf("%d of %d hovers answered from the index", fromIndex, 3*2*len(headers))
}
