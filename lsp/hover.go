package lsp

import (
	"context"
	"fmt"
	"strings"
	"time"

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
	text := snap.mapper.Content
	mentions, problems := reference.ScanText(text)
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

// describeMention returns the hover text of one mention: from the render
// cache while the session's files are unchanged, else rendered under the
// read limiter (queued, cancellable).
func (s *Server) describeMention(ctx context.Context, snap docSnapshot, m reference.Mention) (string, error) {
	key := renderKey{kind: "hover", env: snap.env, id: m.SessionID, label: m.Label, bare: m.Kind != reference.MentionMarkdown,
		md: snap.caps.hoverMarkdown, self: snap.target.SessionID != nil && *snap.target.SessionID == m.SessionID,
		budget: snap.config.MaxReferenceBytes}
	if v, ok := s.renders.get(key); ok {
		return v, nil
	}
	done, err := s.reads.acquire(ctx, "textDocument/hover")
	if err != nil {
		return "", err
	}
	defer done()
	if v, ok := s.renders.get(key); ok {
		return v, nil // rendered by a request queued before this one
	}
	start := time.Now()
	value, dir, err := s.renderMention(ctx, snap, m)
	if err == nil && dir != "" {
		s.renders.put(key, dir, start, value)
	}
	return value, err
}

// renderMention renders the hover text of one mention, and returns the
// session's directory when the text comes from a successful read (so it
// may be cached). Session text (title, label, id, cwd, error messages) is
// shown on one line.
func (s *Server) renderMention(ctx context.Context, snap docSnapshot, m reference.Mention) (value, dir string, err error) {
	md := snap.caps.hoverMarkdown
	var lines []string
	add := func(k, v string) {
		if md {
			lines = append(lines, fmt.Sprintf("- %s: %s", k, v))
		} else {
			lines = append(lines, k+": "+v)
		}
	}
	code := func(v string) string {
		v = completion.OneLine(v)
		if md {
			return completion.CodeSpan(v)
		}
		return v
	}
	env := snap.env
	title := titleOf(ctx, env.source, m.SessionID)
	name := m.SessionID
	if title != nil {
		name = *title
	}
	heading := completion.VisibleLabel(name)
	if md {
		heading = "**" + completion.EscapeMarkdown(heading) + "**"
	}
	add("id", code(m.SessionID))
	if m.Label != name && m.Kind == reference.MentionMarkdown {
		add("label", code(completion.VisibleLabel(m.Label)))
	}
	surf, err := s.readSurface(ctx, env, m.SessionID)
	if err != nil {
		if ctx.Err() != nil {
			return "", "", ctx.Err()
		}
		add("status", "cannot be read: "+completion.OneLine(err.Error()))
		return heading + "\n\n" + strings.Join(lines, "\n"), "", nil
	}
	dir, _ = sessionDir(env.root, surf.Header.CWD, m.SessionID)
	cwd := "no cwd"
	if surf.Header.CWD != nil {
		cwd = *surf.Header.CWD
	}
	add("cwd", code(cwd))
	add("created", completion.FormatTime(surf.Header.CreatedAt))
	if snap.target.SessionID != nil && *snap.target.SessionID == m.SessionID {
		add("status", "this is the document's own session: it cannot reference itself")
		return heading + "\n\n" + strings.Join(lines, "\n"), dir, nil
	}
	// Retain the surface already read rather than Service.RetainOne, which
	// would read (parse) the whole log a second time.
	budget := snap.config.MaxReferenceBytes
	retained, err := reference.Retain(surf, m.Label, budget)
	switch {
	case err != nil && reference.CodeOf(err) == reference.CodeBudgetExceeded:
		msgs, _ := reference.Messages(surf) // the projection Retain just ran: it cannot fail here
		add("messages", fmt.Sprint(len(msgs)))
		add("prompt size", fmt.Sprintf("does not fit the %d-byte budget (maxReferenceBytes)", budget))
	case err != nil:
		add("status", completion.OneLine(err.Error()))
	default:
		stats := retained.Stats
		add("messages", fmt.Sprint(stats.OriginalMessages))
		compacted := "no"
		if stats.Compacted {
			compacted = "yes"
		}
		add("compacted", compacted)
		// Size is the serialization's exact length (checked against
		// AppendJSON by the reference goldens) without building it.
		size := fmt.Sprintf("adds %d bytes of the %d-byte budget (maxReferenceBytes)", retained.Data.Size(), budget)
		if stats.Truncated {
			size += fmt.Sprintf("; %d of %d messages kept, %d bytes omitted", stats.RetainedMessages, stats.OriginalMessages, stats.OmittedBytes)
		}
		add("prompt size", size)
	}
	return heading + "\n\n" + strings.Join(lines, "\n"), dir, nil
}
