package lsp

import (
	"context"
	"fmt"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/dsh-lsp/dsh-lsp/completion"
	"github.com/dsh-lsp/dsh-lsp/lsp/wire"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// hoverSnap is what textDocument/hover reads after the read loop moved on.
type hoverSnap struct {
	doc docSnapshot
	off int // the cursor's byte offset
}

// hoverSnapshot snapshots the document of a hover request and finds the
// cursor in it.
func (s *Server) hoverSnapshot(p *protocol.HoverParams) (hoverSnap, error) {
	snap, err := s.openSnapshot("textDocument/hover", string(p.TextDocument.URI))
	if err != nil {
		return hoverSnap{}, err
	}
	off, err := snap.mapper.Offset(p.Position)
	if err != nil {
		return hoverSnap{}, invalidParams("textDocument/hover: %v", err)
	}
	return hoverSnap{doc: snap, off: off}, nil
}

// hover describes the mention under the cursor: title, id, cwd, created
// time, message count, compaction, and the bytes it adds to the prompt under
// the current maxReferenceBytes budget.
func (s *Server) hover(ctx context.Context, h hoverSnap) (any, error) {
	snap, off := h.doc, h.off
	tm := s.mentionsOf(snap)
	mentions, problems := tm.mentions, tm.problems
	for _, pr := range problems {
		if pr.Span.Start <= off && off <= pr.Span.End {
			rng := snap.mapper.Range(pr.Span.Start, pr.Span.End)
			msg := "invalid session reference URI"
			if pr.Err != nil {
				msg = pr.Err.Message
			}
			return wire.Hover{Contents: wire.MarkupContent{Kind: "plaintext", Value: msg}, Range: &rng}, nil
		}
	}
	for _, m := range mentions {
		if m.Span.Start <= off && off <= m.Span.End {
			rng := snap.mapper.Range(m.Span.Start, m.Span.End)
			value, err := s.describeMention(ctx, snap, m)
			if err != nil {
				return nil, err
			}
			kind := "plaintext"
			if snap.caps.hoverMarkdown {
				kind = "markdown"
			}
			return wire.Hover{Contents: wire.MarkupContent{Kind: kind, Value: value}, Range: &rng}, nil
		}
	}
	return nil, nil
}

// describeMention returns the hover text of one mention, memoized per
// session version: from the index's summary of the session (no read), else
// rendered from a read under the read limit (queued, cancellable).
func (s *Server) describeMention(ctx context.Context, snap docSnapshot, m reference.Mention) (string, error) {
	self := snap.target.SessionID != nil && *snap.target.SessionID == m.SessionID
	render := func(ctx context.Context) (string, int64, error) {
		if v, ok := s.renderFromIndex(ctx, snap, m); ok {
			return v, int64(len(v)), nil
		}
		return s.renderMention(ctx, snap, m)
	}
	v, ok := snap.env.source.Version(ctx, m.SessionID)
	if !ok {
		value, _, err := render(ctx)
		return value, err
	}
	key := memoKey{kind: memoHover, root: snap.env.root, id: m.SessionID, version: v,
		detail: fmt.Sprintf("%q %t %t %t %d", m.Label, m.Kind != reference.MentionMarkdown, snap.caps.hoverMarkdown, self, snap.config.MaxReferenceBytes)}
	return memoize(ctx, &s.memo, key, render)
}

// hoverText collects the lines of one mention's hover text.
type hoverText struct {
	md      bool
	heading string
	lines   []string
}

func (h *hoverText) add(k, v string) {
	if h.md {
		h.lines = append(h.lines, fmt.Sprintf("- %s: %s", k, v))
	} else {
		h.lines = append(h.lines, k+": "+v)
	}
}

func (h *hoverText) code(v string) string {
	v = completion.OneLine(v)
	if h.md {
		return completion.CodeSpan(v)
	}
	return v
}

func (h *hoverText) String() string { return h.heading + "\n\n" + strings.Join(h.lines, "\n") }

// newHoverText starts the hover text of m: the heading (the session's
// title, else its id), the id and the mention's own label when it differs.
// Session text (title, label, id, cwd, error messages) is shown on one line.
func newHoverText(ctx context.Context, snap docSnapshot, m reference.Mention) *hoverText {
	h := &hoverText{md: snap.caps.hoverMarkdown}
	title := titleOf(ctx, snap.env.source, m.SessionID)
	name := m.SessionID
	if title != nil {
		name = *title
	}
	h.heading = completion.VisibleLabel(name)
	if h.md {
		h.heading = "**" + completion.EscapeMarkdown(h.heading) + "**"
	}
	h.add("id", h.code(m.SessionID))
	if m.Label != name && m.Kind == reference.MentionMarkdown {
		h.add("label", h.code(completion.VisibleLabel(m.Label)))
	}
	return h
}

// addHeader adds the session's cwd and creation time, and reports whether
// the session is the document's own (then the status says so and the
// text is complete).
func (h *hoverText) addHeader(snap docSnapshot, m reference.Mention, header reference.SessionHeader) (self bool) {
	cwd := "no cwd"
	if header.CWD != nil {
		cwd = *header.CWD
	}
	h.add("cwd", h.code(cwd))
	h.add("created", completion.FormatTime(header.CreatedAt))
	if snap.target.SessionID != nil && *snap.target.SessionID == m.SessionID {
		h.add("status", "this is the document's own session: it cannot reference itself")
		return true
	}
	return false
}

// addRetained adds the message count, compaction and the bytes the
// mention adds under budget.
func (h *hoverText) addRetained(stats reference.RetentionStats, size, budget int64) {
	h.add("messages", fmt.Sprint(stats.OriginalMessages))
	compacted := "no"
	if stats.Compacted {
		compacted = "yes"
	}
	h.add("compacted", compacted)
	text := fmt.Sprintf("adds %d bytes of the %d-byte budget (maxReferenceBytes)", size, budget)
	if stats.Truncated {
		text += fmt.Sprintf("; %d of %d messages kept, %d bytes omitted", stats.RetainedMessages, stats.OriginalMessages, stats.OmittedBytes)
	}
	h.add("prompt size", text)
}

// renderFromIndex renders the hover text of m from the index's summary of
// the session's surface, without reading its log and without a read slot,
// so a hover costs the same whether the session was read before or not.
// ok is false when the index cannot answer exactly (no summary, or
// retention would truncate a text or fail): renderMention then reads.
func (s *Server) renderFromIndex(ctx context.Context, snap docSnapshot, m reference.Mention) (value string, ok bool) {
	sum, ok := snap.env.source.SurfaceSummary(ctx, m.SessionID)
	if !ok {
		return "", false
	}
	budget := snap.config.MaxReferenceBytes
	self := snap.target.SessionID != nil && *snap.target.SessionID == m.SessionID
	var stats reference.RetentionStats
	var size int64
	if !self {
		if stats, size, ok = reference.RetainSummary(sum, m.Label, budget); !ok {
			return "", false
		}
	}
	h := newHoverText(ctx, snap, m)
	if h.addHeader(snap, m, sum.Header) {
		return h.String(), true
	}
	h.addRetained(stats, size, budget)
	return h.String(), true
}

// renderMention renders the hover text of one mention from a read of the
// session, with its size for the memo (noKeep when the read failed: the
// text says so, and is not kept).
func (s *Server) renderMention(ctx context.Context, snap docSnapshot, m reference.Mention) (value string, size int64, err error) {
	h := newHoverText(ctx, snap, m)
	surf, err := s.readSurface(ctx, snap.env, m.SessionID, "textDocument/hover")
	if err != nil {
		if ctx.Err() != nil {
			return "", 0, ctx.Err()
		}
		h.add("status", "cannot be read: "+completion.OneLine(err.Error()))
		return h.String(), noKeep, nil
	}
	if h.addHeader(snap, m, surf.Header) {
		return h.String(), int64(len(h.String())), nil
	}
	// Retain the surface already read rather than Service.RetainOne, which
	// would read (parse) the whole log a second time.
	budget := snap.config.MaxReferenceBytes
	retained, err := reference.Retain(surf, m.Label, budget)
	switch {
	case err != nil && reference.CodeOf(err) == reference.CodeBudgetExceeded:
		msgs, _ := reference.Messages(surf) // the projection Retain just ran: it cannot fail here
		h.add("messages", fmt.Sprint(len(msgs)))
		h.add("prompt size", fmt.Sprintf("does not fit the %d-byte budget (maxReferenceBytes)", budget))
	case err != nil:
		h.add("status", completion.OneLine(err.Error()))
	default:
		// Size is the serialization's exact length (checked against
		// AppendJSON by the reference goldens) without building it.
		h.addRetained(retained.Stats, retained.Data.Size(), budget)
	}
	value = h.String()
	return value, int64(len(value)), nil
}
