package mcpserver

import "github.com/dsh-lsp/dsh-lsp/sessionstore"

// The index signals listing changes: Watch relies on it to announce a
// store change at once instead of at the next poll.
var _ changeNotifier = (*sessionstore.Indexed)(nil)
