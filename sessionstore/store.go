// Package sessionstore reads real dsh session stores (raw and zstd JSONL)
// and implements reference.Source over them, read-only.
package sessionstore

import (
	"context"
	"errors"

	"github.com/dsh-lsp/dsh-lsp/reference"
)

var errPending = errors.New("sessionstore: not implemented yet")

// Store reads one store root. It never writes, locks or renames anything
// under the root.
type Store struct {
	root string
}

var _ reference.Source = (*Store)(nil)

// Open returns a Store over root. The root need not exist yet (a missing
// root lists no sessions).
func Open(root string) (*Store, error) { return &Store{root: root}, nil }

// Root returns the store root directory.
func (s *Store) Root() string { return s.root }

// ListSessions implements reference.Source.
func (s *Store) ListSessions(ctx context.Context) ([]reference.SessionHeader, error) {
	return nil, errPending
}

// ReadTitles implements reference.Source.
func (s *Store) ReadTitles(ctx context.Context, ids []string) ([]reference.TitleResult, error) {
	return nil, errPending
}

// ReadSurface implements reference.Source.
func (s *Store) ReadSurface(ctx context.Context, id string) (*reference.Surface, error) {
	return nil, errPending
}

// ResolveRoot returns the store root: flag (or setting) when non-empty, else
// $DSH_HOME/sessions when DSH_HOME is set and not blank, else
// ~/.dsh/sessions.
func ResolveRoot(flag string) (string, error) { return flag, errPending }
