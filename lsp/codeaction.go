package lsp

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/dsh-lsp/dsh-lsp/diagnostics"
	"github.com/dsh-lsp/dsh-lsp/lsp/protocol"
)

// codeAction offers the quick fixes of diagnostics.Fixes for the requested
// range: replace with canonical URI, convert bare URI to mention, remove
// duplicate mention.
func (s *Server) codeAction(ctx context.Context, params json.RawMessage) (any, error) {
	var p protocol.CodeActionParams
	if err := decodeParams("textDocument/codeAction", params, &p); err != nil {
		return nil, err
	}
	snap, err := s.openSnapshot("textDocument/codeAction", p.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	if len(p.Context.Only) > 0 && !slices.Contains(p.Context.Only, protocol.CodeActionKindQuickFix) && !slices.Contains(p.Context.Only, "") {
		return []protocol.CodeAction{}, nil
	}
	release(ctx)
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
	if ctx.Err() != nil {
		return nil, requestError(ctx, ctx.Err())
	}
	return actions, nil
}
