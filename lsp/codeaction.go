package lsp

import (
	"context"
	"encoding/json"
	"slices"

	"go.lsp.dev/protocol"

	"github.com/dsh-lsp/dsh-lsp/diagnostics"
	"github.com/dsh-lsp/dsh-lsp/lsp/wire"
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
	snap, err := s.openSnapshot("textDocument/codeAction", string(p.TextDocument.URI))
	none := len(p.Context.Only) > 0 && !slices.Contains(p.Context.Only, protocol.CodeActionKindQuickFix) && !slices.Contains(p.Context.Only, "")
	return codeActionSnap{doc: snap, p: p, none: none}, err
}

// codeAction offers the quick fixes of diagnostics.Fixes for the requested
// range: replace with canonical URI, convert bare URI to mention, remove
// duplicate mention.
func (s *Server) codeAction(ctx context.Context, c codeActionSnap) (any, error) {
	if c.none {
		return []wire.CodeAction{}, nil
	}
	snap, p := c.doc, c.p
	start := snap.mapper.ClampedOffset(p.Range.Start)
	end := snap.mapper.ClampedOffset(p.Range.End)
	if end < start {
		start, end = end, start
	}
	titleOf := func(id string) *string { return titleOf(ctx, snap.env.source, id) }
	fixes := diagnostics.Fixes(snap.mapper.Content, start, end, titleOf)
	actions := make([]wire.CodeAction, 0, len(fixes))
	// Map every span in one sweep rather than walking each line from its
	// start for every fix (thousands of mentions may share a line).
	offs := make([]int, 0, 2*len(fixes))
	for _, f := range fixes {
		offs = append(offs, f.Span.Start, f.Span.End)
	}
	pos := snap.mapper.Positions(offs)
	for i, f := range fixes {
		a := wire.CodeAction{
			Title:       f.Title,
			Kind:        wire.CodeActionKindQuickFix,
			IsPreferred: f.Preferred,
			Edit: wire.WorkspaceEdit{Changes: map[string][]wire.TextEdit{
				snap.uri: {{Range: protocol.Range{Start: pos[2*i], End: pos[2*i+1]}, NewText: f.NewText}},
			}},
		}
		for _, d := range p.Context.Diagnostics {
			if code, ok := d.Code.(protocol.String); ok && string(code) == f.Code && f.Code != "" {
				a.Diagnostics = append(a.Diagnostics, echoDiagnostic(d))
			}
		}
		actions = append(actions, a)
	}
	return actions, nil
}

// echoDiagnostic is a diagnostic the client sent in a code action's context,
// in the form the action lists it (the server's codes are strings, its
// messages plain text; data is copied as sent).
func echoDiagnostic(d protocol.Diagnostic) wire.Diagnostic {
	code, _ := d.Code.(protocol.String)
	var msg string
	switch m := d.Message.(type) {
	case protocol.String:
		msg = string(m)
	case *protocol.MarkupContent:
		msg = m.Value
	}
	src, _ := d.Source.Get()
	return wire.Diagnostic{Range: d.Range, Severity: int(d.Severity), Code: string(code), Source: src, Message: msg, Data: json.RawMessage(d.Data)}
}
