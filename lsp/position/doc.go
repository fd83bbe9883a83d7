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
