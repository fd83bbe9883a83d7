package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.lsp.dev/protocol"

	"github.com/dsh-lsp/dsh-lsp/completion"
	"github.com/dsh-lsp/dsh-lsp/lsp/wire"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// completionSnap is what textDocument/completion reads after the read
// loop moved on.
type completionSnap struct {
	doc docSnapshot
	pos protocol.Position
}

// completionSnapshot snapshots the document of a completion request.
func (s *Server) completionSnapshot(p *protocol.CompletionParams) (completionSnap, error) {
	snap, err := s.openSnapshot("textDocument/completion", string(p.TextDocument.URI))
	return completionSnap{doc: snap, pos: p.Position}, err
}

// completion answers textDocument/completion with the dsh candidates for
// the active mention query, or an empty list when none is active.
func (s *Server) completion(ctx context.Context, c completionSnap) (any, error) {
	snap := c.doc
	cursor, err := snap.mapper.Offset(c.pos)
	if err != nil {
		return nil, invalidParams("textDocument/completion: %v", err)
	}
	q, ok := completion.FindQueryScanned(snap.mapper.Content, cursor, func() ([]reference.Mention, []reference.Problem) {
		tm := s.mentionsOf(snap)
		return tm.mentions, tm.problems
	})
	if !ok {
		return wire.CompletionList{IsIncomplete: false, Items: []wire.CompletionItem{}}, nil
	}
	// The content search (if any) runs beside dsh's listing.
	hitsCh := s.startContentHits(snap, q)
	cands, err := s.candidates(ctx, snap.env, snap.target, q.Text, snap.config.CandidateLimit, true)
	if err != nil {
		return nil, err
	}
	// Incomplete: the server filters (on id and cwd too, with dsh's
	// lowercasing), so clients must re-query as the user types.
	style := completion.StylePortable
	if snap.caps.ale {
		style = completion.StyleALE
	}
	// Then the sessions whose text matches (content search), if any.
	extra := s.contentItems(ctx, snap, q, hitsCh, cands, style)
	a := newPooledAnswer()
	*a.buf = completion.AppendList(*a.buf, cands, q, snap.mapper, style, extra)
	return a, nil
}

// resolveSnap is what completionItem/resolve reads after the read loop
// moved on.
type resolveSnap struct {
	item wire.CompletionItem
	// ours is set for items the server made (data carries a session id).
	ours     bool
	data     completion.ItemData
	env      *environment
	markdown bool
}

// resolveSnapshot decodes the item's data and snapshots the settings.
func (s *Server) resolveSnapshot(item *wire.CompletionItem) (resolveSnap, error) {
	r := resolveSnap{item: *item}
	if len(item.Data) == 0 || json.Unmarshal(item.Data, &r.data) != nil || r.data.SessionID == "" {
		return r, nil // not ours: nothing to add
	}
	r.ours = true
	r.env, _ = s.snapshotEnv()
	s.mu.Lock()
	r.markdown = s.caps.docMarkdown
	s.mu.Unlock()
	return r, nil
}

// completionResolve adds documentation with a conversation preview.
func (s *Server) completionResolve(ctx context.Context, r resolveSnap) (any, error) {
	item, data := r.item, r.data
	if !r.ours {
		return item, nil
	}
	doc, err := s.itemDocumentation(ctx, r)
	if err != nil {
		return nil, err
	}
	kind := "plaintext"
	if r.markdown {
		kind = "markdown"
	}
	if data.Snippet != "" {
		doc = "Found in text: " + data.Snippet + "\n\n" + doc
	}
	item.Documentation = &wire.MarkupContent{Kind: kind, Value: doc}
	return item, nil
}

// itemDocumentation renders an item's documentation from a read of its
// session, memoized per session version.
func (s *Server) itemDocumentation(ctx context.Context, r resolveSnap) (string, error) {
	data := r.data
	render := func(ctx context.Context) (string, int64, error) {
		surf, err := s.readSurface(ctx, r.env, data.SessionID, "completionItem/resolve")
		if err != nil {
			if ctx.Err() != nil {
				return "", 0, ctx.Err()
			}
			s.logger.Debug("resolve: cannot read session", "id", data.SessionID, "error", err)
			return completion.Documentation(data, nil, r.markdown).Value, noKeep, nil
		}
		doc := completion.Documentation(data, surf, r.markdown).Value
		return doc, int64(len(doc)), nil
	}
	v, ok := r.env.source.Version(ctx, data.SessionID)
	if !ok {
		doc, _, err := render(ctx)
		return doc, err
	}
	cwd := "\x00"
	if data.CWD != nil {
		cwd = *data.CWD
	}
	key := memoKey{kind: memoResolve, root: r.env.root, id: data.SessionID, version: v,
		detail: fmt.Sprintf("%q %q %t %d", data.Label, cwd, r.markdown, data.CreatedAt)}
	return memoize(ctx, &s.memo, key, render)
}

// targetKey returns t's cwd and session id, "\x00" when absent (for
// keys).
func targetKey(t reference.Target) (cwd, id string) {
	cwd, id = "\x00", "\x00"
	if t.CWD != nil {
		cwd = *t.CWD
	}
	if t.SessionID != nil {
		id = *t.SessionID
	}
	return cwd, id
}

// partialGrace is how long a completion waits, while nothing is indexed
// yet, for the first indexing pass: a small store finishes it well within
// this (its first popup is then complete, not empty); a large one has
// published its first sessions by then.
const partialGrace = time.Second

// partialPoll is how often that wait looks at the partial index.
const partialPoll = 10 * time.Millisecond

// candidates returns ListCandidates. The index revalidates once, in its
// Catalog (reference.ListCandidates), whose filtering is fast enough per
// keystroke that the lists are not cached (BenchmarkCompletion).
//
// While the store is first indexed: with allowPartial (textDocument/
// completion, whose list is isIncomplete, so clients re-ask as the user
// types) the answer comes from what is indexed so far, read from memory
// (no log is read): at once when some sessions are indexed, else after at
// most partialGrace (see there); without it (dsh/candidates, whose answer
// cannot say it is partial) the call waits, cancellably, for the first
// pass to finish.
func (s *Server) candidates(ctx context.Context, env *environment, t reference.Target, query string, limit int64, allowPartial bool) ([]reference.Candidate, error) {
	if !allowPartial {
		if err := waitIndexed(ctx, env); err != nil {
			return nil, err
		}
		return env.service.ListCandidates(ctx, t, query, limit)
	}
	svc, _, err := env.currentAfterGrace(ctx, partialGrace, partialPoll)
	if err != nil {
		return nil, err
	}
	return svc.ListCandidates(ctx, t, query, limit)
}
