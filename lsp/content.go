package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	"go.lsp.dev/jsonrpc2"

	"github.com/dsh-lsp/dsh-lsp/completion"
	"github.com/dsh-lsp/dsh-lsp/contentindex"
	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
	"github.com/dsh-lsp/dsh-lsp/lsp/wire"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// Content search (CONTRACT §9): one content index per store root, opened
// with the root's source when the contentSearch setting is on and the
// source is the sessionstore index (the only source that knows transcript
// versions). A background loop syncs it after every change the store index
// reports (the signal diagnostics follow), so completion can answer from it
// as it is; dsh/search syncs before answering.

// contentSearch is the content index of one store root. The index is
// opened by its sync loop once the store index has checked the store:
// opening reads every session's title and version (about 0.3 s and 15 MB
// at 100,000 sessions), which must not delay the first answers of a
// restart, and no content hit is served before the first sync anyway.
type contentSearch struct {
	src *sessionstore.Indexed
	// opened is closed when the open was tried: ix is then the index, or
	// nil (openErr says why).
	opened  chan struct{}
	ix      *contentindex.Index
	openErr error
	// closed ends the sync loop when the index is closed (its store is
	// released, or content search turned off).
	closed    chan struct{}
	closeOnce sync.Once
}

// close closes the index and ends its sync loop.
func (c *contentSearch) close() {
	c.closeOnce.Do(func() {
		close(c.closed)
		<-c.opened // the loop gives up its wait, or finishes the open
		if c.ix != nil {
			c.ix.Close()
		}
	})
}

// index returns the index when it is open, else nil, without waiting.
func (c *contentSearch) index() *contentindex.Index {
	select {
	case <-c.opened:
		return c.ix
	default:
		return nil
	}
}

// wait returns the index once the open was tried.
func (c *contentSearch) wait(ctx context.Context) (*contentindex.Index, error) {
	select {
	case <-c.opened:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if c.ix == nil {
		return nil, fmt.Errorf("content index unavailable: %v", c.openErr)
	}
	return c.ix, nil
}

// contentBudget is how long a completion waits for its content hits once
// dsh's candidates are ready (the search runs beside the listing); past it
// the list goes out with dsh's candidates only (it is incomplete, so the
// client asks again as the user types, and a repeated query finds the hits
// cached).
const contentBudget = 20 * time.Millisecond

// contentMinRunes is the shortest completion query that gets content hits:
// shorter terms have no trigram, and scanning every session's text on each
// keystroke is not worth it (dsh/search and the CLI still answer them).
const contentMinRunes = 3

// contentFor returns the content index of root when content search is on
// for st, opening it (and its sync loop) on first use; when it is off, the
// index of root (if any) is closed and its file removed, so nothing of the
// session bodies is kept.
func (s *Server) contentFor(root string, src reference.Source, st settings) *contentSearch {
	x, ok := src.(*sessionstore.Indexed)
	if !ok {
		return nil
	}
	on := st.contentSearch && !s.opts.NoContentIndex
	s.mu.Lock()
	c := s.contents[root]
	if !on {
		delete(s.contents, root)
	}
	s.mu.Unlock()
	if !on {
		if c != nil {
			c.close()
		}
		contentindex.Remove(x.ContentIndexPath())
		return nil
	}
	if c != nil {
		return c
	}
	c = &contentSearch{src: x, opened: make(chan struct{}), closed: make(chan struct{})}
	s.mu.Lock()
	if other := s.contents[root]; other != nil {
		s.mu.Unlock()
		return other
	}
	s.contents[root] = c
	s.mu.Unlock()
	s.syncContent(c)
	return c
}

// openContent opens c's index (closing c.opened), unless c is closed
// first.
func (s *Server) openContent(ctx context.Context, c *contentSearch) {
	defer close(c.opened)
	if ctx.Err() != nil {
		c.openErr = ctx.Err()
		return
	}
	c.ix, c.openErr = contentindex.Open(c.src.ContentIndexPath(), contentindex.Options{
		Logf: func(format string, args ...any) { s.logger.Warn(fmt.Sprintf(format, args...)) },
	})
	if c.openErr != nil {
		s.logger.Warn("content search unavailable", "root", c.src.Root(), "error", c.openErr)
	}
}

// syncContent opens c's index after the store index's first refresh and
// keeps it in step with its store: then, and after every change the store
// index reports, until c is closed or the session ends.
func (s *Server) syncContent(c *contentSearch) {
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		// Closing c cancels a sync in progress: closing takes the index's
		// lock, which a sync holds until it is done (minutes for a large
		// store), and turning content search off closes c on the
		// connection's read goroutine.
		ctx, cancel := context.WithCancel(s.ctx)
		defer cancel()
		go func() {
			select {
			case <-c.closed:
				cancel()
			case <-ctx.Done():
			}
		}()
		waitErr := c.src.Wait(ctx)
		s.openContent(ctx, c)
		if waitErr != nil || c.ix == nil {
			return
		}
		var src contentindex.Source = c.src
		if s.contentSyncSource != nil {
			src = s.contentSyncSource(src)
		}
		for {
			ch := c.src.Changed()
			start := time.Now()
			n, err := c.ix.Sync(ctx, src)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				s.logger.Warn("content index sync failed", "root", c.src.Root(), "error", err)
				if !c.alive(s) {
					return
				}
			} else if n > 0 {
				s.logger.Debug("content index synced", "root", c.src.Root(), "sessions", n, "took", time.Since(start))
			}
			select {
			case <-ctx.Done():
				return
			case <-ch:
			}
			if !c.alive(s) {
				return
			}
		}
	}()
}

// alive reports whether c is still the content index of its root.
func (c *contentSearch) alive(s *Server) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.contents[c.src.Root()] == c
}

// closeContentsLocked closes every content index (session end). Callers
// hold s.mu.
func (s *Server) closeContentsLocked() {
	for root, c := range s.contents {
		c.close()
		delete(s.contents, root)
	}
}

// searchParams is dsh/search.
type searchParams struct {
	Query *string  `json:"query"`
	Limit *float64 `json:"limit"`
}

// searchSnapshot checks the params of dsh/search and snapshots the
// environment, the workspace's target and the limit (given, at most
// contentindex.MaxLimit, or contentindex.DefaultLimit).
func (s *Server) searchSnapshot(p *searchParams) (listSnap, error) {
	if p.Query == nil {
		return listSnap{}, invalidParams(`dsh/search: missing "query"`)
	}
	return s.listSnapshot(listRequest{query: p.Query, limit: p.Limit},
		func(reference.Config) int64 { return contentindex.DefaultLimit }, contentindex.MaxLimit)
}

// dshSearch is dsh/search: the content-search hits, after syncing the
// content index with the store.
func (s *Server) dshSearch(ctx context.Context, c listSnap) (any, error) {
	cs := c.env.content
	if cs == nil {
		return nil, jsonrpc2.NewError(codeRequestFailed, "dsh/search: content search is off (setting contentSearch, flag --no-content-index)")
	}
	// The whole store, as dsh/candidates: a first pass still running would
	// leave the sessions it has not reached out of the answer.
	if err := waitIndexed(ctx, c.env); err != nil {
		return nil, err
	}
	ix, err := cs.wait(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, jsonrpc2.NewError(codeRequestFailed, "dsh/search: "+err.Error())
	}
	items, err := ix.Find(ctx, cs.src, c.target, c.query, int(c.limit))
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, jsonrpc2.NewError(codeRequestFailed, "dsh/search: "+err.Error())
	}
	b, err := jsjson.Marshal(items)
	if err != nil {
		return nil, fmt.Errorf("dsh/search: %w", err)
	}
	return jsonrpc2.RawMessage(b), nil
}

// contentHitsKey identifies a completion's content search.
type contentHitsKey struct {
	ix              *contentindex.Index
	gen             uint64
	query, targetID string
	limit           int
}

// contentHits caches the content hits of recent completion queries, so
// that hits which missed an answer's budget are in the next answer for
// the same query.
type contentHits struct {
	mu      sync.Mutex
	entries map[contentHitsKey][]contentindex.Item
}

func (c *contentHits) get(k contentHitsKey) ([]contentindex.Item, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	items, ok := c.entries[k]
	return items, ok
}

func (c *contentHits) put(k contentHitsKey, items []contentindex.Item) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= 256 {
		c.entries = map[contentHitsKey][]contentindex.Item{}
	}
	c.entries[k] = items
}

// startContentHits starts the content search of a completion query, beside
// the candidate listing: the channel yields its hits (nil on failure, or
// when content search does not apply). The search itself is not tied to
// the request: if it misses the answer, its result is cached for the next
// request of the same query.
func (s *Server) startContentHits(snap docSnapshot, q completion.Query) <-chan []contentindex.Item {
	cs := snap.env.content
	if cs == nil || utf8.RuneCountInString(q.Text) < contentMinRunes {
		return nil
	}
	ix := cs.index()
	if ix == nil || !ix.Synced() {
		return nil
	}
	_, targetID := targetKey(snap.target)
	limit := int(min(snap.config.CandidateLimit, contentindex.DefaultLimit))
	// Room for hits that are candidates already (dropped later).
	key := contentHitsKey{ix: ix, gen: ix.Generation(), query: q.Text, targetID: targetID, limit: 2 * limit}
	ch := make(chan []contentindex.Item, 1)
	if items, ok := s.contentHits.get(key); ok {
		ch <- items
		return ch
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		ctx, cancel := context.WithTimeout(s.ctx, 2*time.Second)
		defer cancel()
		items, err := ix.Items(ctx, cs.src, snap.target, q.Text, key.limit)
		if err != nil {
			if ctx.Err() == nil {
				s.logger.Debug("completion: content search failed", "error", err)
			}
			ch <- nil
			return
		}
		s.contentHits.put(key, items)
		ch <- items
	}()
	return ch
}

// contentItems waits at most contentBudget for the content hits of q and
// returns completion items for those not among listed, sorted after them.
func (s *Server) contentItems(ctx context.Context, snap docSnapshot, q completion.Query, hitsCh <-chan []contentindex.Item, listed []reference.Candidate, style completion.Style) []wire.CompletionItem {
	if hitsCh == nil {
		return nil
	}
	var hits []contentindex.Item
	timer := time.NewTimer(contentBudget)
	defer timer.Stop()
	select {
	case hits = <-hitsCh:
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return nil
	}
	limit := int(min(snap.config.CandidateLimit, contentindex.DefaultLimit))
	seen := make(map[string]bool, len(listed))
	for _, c := range listed {
		seen[c.SessionID] = true
	}
	var cands []reference.Candidate
	var snippets []string
	for _, h := range hits {
		if seen[h.SessionID] || len(cands) == limit {
			continue
		}
		cands = append(cands, reference.Candidate{SessionID: h.SessionID, Label: h.Label, CWD: h.CWD, CreatedAt: h.CreatedAt})
		snippets = append(snippets, h.Snippet)
	}
	items := completion.ItemsStyled(cands, q, snap.mapper, style)
	width := len(fmt.Sprint(len(items)))
	for i := range items {
		it := &items[i]
		// After every candidate: their sort texts are digits.
		it.SortText = fmt.Sprintf("~%0*d", width, i)
		it.Detail = "in text: " + snippets[i]
		// The snippet rides in data for completionItem/resolve, added to
		// the object the candidate wrote (with its string semantics).
		if snip, err := jsjson.Marshal(snippets[i]); err == nil && len(it.Data) > 1 {
			d := append(json.RawMessage(nil), it.Data[:len(it.Data)-1]...)
			d = append(append(append(d, `,"snippet":`...), snip...), '}')
			it.Data = d
		}
	}
	return items
}
