package sessionstore

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/dsh-lsp/dsh-lsp/reference"
)

// SessionVersion is one listed session and a version string of the
// transcript a read of it loads: the string changes whenever the file is
// replaced, truncated, appended to or rewritten, so a derived index (the
// content index) re-reads exactly the sessions whose string changed.
type SessionVersion struct {
	Header  reference.SessionHeader
	Version string
}

// SessionVersions revalidates the index like a query does and returns
// every listed session with its version, in listing order. A listed
// session that a read cannot resolve to exactly one transcript (the
// store's find rules) has an empty Version.
func (x *Indexed) SessionVersions(ctx context.Context) ([]SessionVersion, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := x.maybeRefresh(ctx); err != nil {
		return nil, err
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := make([]SessionVersion, len(x.listing))
	for i, h := range x.listing {
		out[i].Header = h
		if e := x.titleEntry(h.ID); e != nil {
			out[i].Version = fmt.Sprintf("%d:%d:%d:%d:%d", e.Enc, e.Sig.Dev, e.Sig.Ino, e.Sig.Size, e.Sig.MtimeNs)
		}
	}
	return out, nil
}

// ContentIndexPath returns where a content index of this store belongs:
// beside the persisted metadata index in the cache directory (so it
// follows the same rules: never under the store root), or "" when the
// index is kept in memory only.
func (x *Indexed) ContentIndexPath() string {
	if x.cachePath == "" {
		return ""
	}
	base := strings.TrimSuffix(filepath.Base(x.cachePath), ".bin")
	base = strings.TrimPrefix(base, "index-")
	return filepath.Join(filepath.Dir(x.cachePath), "content-"+base+".db")
}
