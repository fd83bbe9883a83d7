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
