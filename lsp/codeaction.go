package lsp

import (
	"context"
	"slices"

	"github.com/dsh-lsp/dsh-lsp/diagnostics"
	"github.com/dsh-lsp/dsh-lsp/lsp/protocol"
)

// codeActionSnap is what textDocument/codeAction reads after the read loop
// moved on.
type codeActionSnap struct {
	doc docSnapshot
	p   *protocol.CodeActionParams
	// none is set when the client asked only for kinds the server has not.
	none bool
}

// codeActionSnapshot snapshots the document of a code action request.
func (s *Server) codeActionSnapshot(p *protocol.CodeActionParams) (codeActionSnap, error) {
	snap, err := s.openSnapshot("textDocument/codeAction", p.TextDocument.URI)
	none := len(p.Context.Only) > 0 && !slices.Contains(p.Context.Only, protocol.CodeActionKindQuickFix) && !slices.Contains(p.Context.Only, "")
	return codeActionSnap{doc: snap, p: p, none: none}, err
}

// codeAction offers the quick fixes of diagnostics.Fixes for the requested
// range: replace with canonical URI, convert bare URI to mention, remove
// duplicate mention.
func (s *Server) codeAction(ctx context.Context, c codeActionSnap) (any, error) {
	if c.none {
		return []protocol.CodeAction{}, nil
	}
	snap, p := c.doc, c.p
	start := snap.mapper.ClampedOffset(p.Range.Start)
	end := snap.mapper.ClampedOffset(p.Range.End)
	if end < start {
		start, end = end, start
	}
	titleOf := func(id string) *string { return titleOf(ctx, snap.env.source, id) }
	fixes := diagnostics.Fixes(snap.mapper.Content, start, end, titleOf)
	actions := make([]protocol.CodeAction, 0, len(fixes))
	// Map every span in one sweep rather than walking each line from its
	// start for every fix (thousands of mentions may share a line).
	offs := make([]int, 0, 2*len(fixes))
	for _, f := range fixes {
		offs = append(offs, f.Span.Start, f.Span.End)
	}
	pos := snap.mapper.Positions(offs)
	for i, f := range fixes {
		a := protocol.CodeAction{
			Title:       f.Title,
			Kind:        protocol.CodeActionKindQuickFix,
			IsPreferred: f.Preferred,
			Edit: protocol.WorkspaceEdit{Changes: map[string][]protocol.TextEdit{
				snap.uri: {{Range: protocol.Range{Start: pos[2*i], End: pos[2*i+1]}, NewText: f.NewText}},
			}},
		}
		for _, d := range p.Context.Diagnostics {
			if d.Code == f.Code && f.Code != "" {
				a.Diagnostics = append(a.Diagnostics, d)
			}
		}
		actions = append(actions, a)
	}
	return actions, nil
}
