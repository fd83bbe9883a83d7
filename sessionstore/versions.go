package sessionstore

import (
	"context"
	"iter"
	"path/filepath"
	"strings"
	"time"

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
// every listed session with its version, in listing order: a sequence over
// the listing of that moment, which may be iterated any number of times,
// each version made as it is reached (at 100,000 sessions a slice of them
// held 11 MB while the content index synced). A listed session that a
// read cannot resolve to exactly one transcript (the store's find rules)
// has an empty Version.
func (ix *Indexed) SessionVersions(ctx context.Context) (iter.Seq[SessionVersion], error) {
	seq, _, _, err := ix.SessionVersionsSince(ctx, VersionsMark{})
	return seq, err
}

// VersionsMark is what SessionVersionsSince compares with: the listing an
// answer was made from and the entry it found for each session. The zero
// mark is no earlier answer.
type VersionsMark struct {
	listing []reference.SessionHeader
	found   []*entry
}

// SessionVersionsSince is SessionVersions, with the mark of its answer.
// Given the mark of an earlier answer whose listing is still the index's
// (writes published in place keep it), it returns only the sessions whose
// entry changed since (partial): a session's version is its entry's, and a
// published entry is never modified. At 100,000 sessions a live session's
// write made the content index compare every session's version.
func (ix *Indexed) SessionVersionsSince(ctx context.Context, since VersionsMark) (seq iter.Seq[SessionVersion], mark VersionsMark, partial bool, err error) {
	if err := ix.query(ctx); err != nil {
		return nil, VersionsMark{}, false, err
	}
	ix.mu.RLock()
	// A listing and its lookup are replaced, never modified.
	listing, lookup, gen := ix.listing, ix.byID, ix.gen
	ix.mu.RUnlock()
	// The catalog of the listing holds the entry a read of each session
	// loads (nil where none): when queries keep one, the sessions are not
	// looked up again (at 100,000 sessions a sync after every write of a
	// live session looked up all of them, 0.1 s).
	var found []*entry
	if s := ix.catalog.snap.Load(); s != nil {
		if s.gen != gen {
			if _, err := ix.catalogNow(ctx); err == nil {
				s = ix.catalog.snap.Load()
			}
		}
		if s.gen == gen {
			found = s.entries
		}
	}
	mark = VersionsMark{listing: listing, found: found}
	partial = found != nil && sameSlice(since.listing, listing) && len(since.found) == len(found)
	version := func(i int) SessionVersion {
		h := listing[i]
		v := SessionVersion{Header: h}
		var e *entry
		if found != nil {
			e = found[i]
		} else {
			e = lookup.find(ix, h.ID)
		}
		if e != nil {
			v.Version = e.contentVersion()
		}
		return v
	}
	return func(yield func(SessionVersion) bool) {
		for i := range listing {
			if partial && found[i] == since.found[i] {
				continue
			}
			if !yield(version(i)) {
				return
			}
		}
	}, mark, partial, nil
}

// sameSlice reports whether a and b are the same slice (the same elements
// in memory), not only equal ones.
func sameSlice[E any](a, b []E) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// ListedCandidates returns, in the order of ids, the candidate of each
// id the index lists (its listing header, labelled with its latest title,
// else its id), without revalidating or reading any file: the index as it
// is. A derived index labels its hits with it between its syncs rather
// than keeping a copy of the listing.
func (ix *Indexed) ListedCandidates(ids []string) []reference.Candidate {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	out := make([]reference.Candidate, 0, len(ids))
	for _, id := range ids {
		e := ix.byID.listed(ix, id)
		if e == nil {
			continue
		}
		title := reference.TitleResult{SessionID: id}
		if t := ix.titleEntry(id); t != nil {
			title = t.titleResult(id, ix.root)
		}
		out = append(out, reference.Candidate{SessionID: id, Label: title.Label(), CWD: e.ListedCWD, CreatedAt: e.ListedCreatedAt})
	}
	return out
}

// versionSettle is how long after its last modification a transcript gets
// a Version: a file system whose timestamps tick coarsely gives a second
// same-size write within one tick the same modification time.
const versionSettle = time.Second

// Version revalidates the index like a query does and returns the version
// of the transcript a read of id loads now, in the form SessionVersions
// gives it: what was derived from a read of the session may be reused
// while Version returns the same string. ok is false when no answer about
// the session should be kept: it is not indexed (unknown, or not one
// transcript), its last read failed, it was rewritten in place without
// changing its signature, or it was modified less than versionSettle ago.
func (ix *Indexed) Version(ctx context.Context, id string) (v string, ok bool) {
	if ix.query(ctx) != nil {
		return "", false
	}
	e, cur, same := ix.answering(id)
	if e == nil || !same && cur == e.Sig || time.Since(time.Unix(0, cur.MtimeNs)) < versionSettle {
		return "", false
	}
	return transcriptVersion(e.Enc, cur), true
}

// answering returns id's entry when it answers a read of id without error
// (else nil) and the signature of its transcript now; same is false when
// the transcript is no longer the one indexed (replaced, truncated, or
// rewritten before the indexed offset).
func (ix *Indexed) answering(id string) (e *entry, cur fileSig, same bool) {
	ix.mu.RLock()
	e = ix.titleEntry(id)
	ix.mu.RUnlock()
	if e == nil || !e.State.present() || e.fault().err != nil || e.ReadID != id {
		return nil, fileSig{}, false
	}
	f, cur, same, err := openState(nil, ix.root, e.path(ix.root), e.Sig, e.tail())
	if err != nil {
		return nil, fileSig{}, false
	}
	if same {
		f.Close()
	}
	return e, cur, same
}

// ContentIndexPath returns where a content index of this store belongs:
// beside the persisted metadata index (never under the store root), or ""
// when the index is kept in memory only.
func (ix *Indexed) ContentIndexPath() string {
	if ix.cachePath == "" {
		return ""
	}
	base := strings.TrimPrefix(strings.TrimSuffix(filepath.Base(ix.cachePath), ".bin"), "index-")
	return filepath.Join(filepath.Dir(ix.cachePath), "content-"+base+".db")
}
