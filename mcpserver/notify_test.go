package mcpserver

import (
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// The server holds the index by its documented abilities: Run's watch relies on
// the change signal to announce a store change at once instead of at the
// next poll, searches on Wait, polls on Catalog.
var (
	_ reference.Index         = (*sessionstore.Indexed)(nil)
	_ reference.ChangeTracker = (*sessionstore.Indexed)(nil)
)
