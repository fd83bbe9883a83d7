// Package position maps between byte offsets in a document and LSP
// positions in the negotiated position encoding (utf-8, utf-16, utf-32), and
// holds open documents as a chunked Text that applies content changes
// without copying the whole document per change.
//
// It is the only place that counts UTF-16 and UTF-32 units. Positions and
// ranges are go.lsp.dev/protocol's wire types, so callers hand them to the
// library's encoder unchanged. The package knows nothing of sessions or
// mentions (it does not import reference).
package position

import "go.lsp.dev/protocol"

// Position is a zero-based line and character offset; the unit of Character
// is the negotiated position encoding.
type Position = protocol.Position

// Range is a half-open range [Start, End).
type Range = protocol.Range

// Change is one content change of textDocument/didChange: an incremental
// change (Range set, in the negotiated encoding) or the whole new text
// (Range nil).
type Change struct {
	Range *Range
	Text  string
}
