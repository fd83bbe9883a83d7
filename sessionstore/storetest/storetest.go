// Package storetest opens session stores for tests and tools that change a
// store between queries and want each answer to be the store's as it is
// then (not the server's freshness policy).
package storetest

import (
	"context"

	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// OpenSynced opens an in-memory index over root (enc 0 detects the
// encoding) whose every query first brings it up to date with the store (a
// stat scan, parsing only what changed), after a completed first pass.
// Close releases it.
func OpenSynced(root string, enc sessionstore.Encoding) (*sessionstore.Indexed, error) {
	x, err := sessionstore.OpenIndexed(root, sessionstore.IndexOptions{Encoding: enc, CacheDir: sessionstore.NoCache, NoWatch: true, RefreshInterval: -1})
	if err != nil {
		return nil, err
	}
	if err := x.Wait(context.Background()); err != nil {
		x.Close()
		return nil, err
	}
	return x, nil
}
