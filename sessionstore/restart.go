package sessionstore

import (
	"context"
	"path/filepath"
	"time"
)

// A restart on the persisted index answers completion before its first
// refresh has stat'd every session (at 100,000 sessions that refresh takes
// seconds), under two checks that cost what the answer holds, not what
// the store holds:
//
//   - the store's shape: the root and every project directory still have
//     the mtimes the cache recorded, old enough to trust, so no session
//     directory came or went (storeShape.matches);
//   - what it serves: each session a catalog answer shows is stat'd and
//     must be the transcript its entry indexed (verifyServed). When one is
//     not, the early path closes and the query asks again, which then
//     waits for the first refresh.
//
// Everything else (ListSessions, ReadTitles, reads) waits for the first
// refresh as before.

// storeShape is the mtimes of the store root and of its project
// directories at a scan.
type storeShape struct {
	root     int64
	projects map[string]int64
}

// matches reports whether the directories under root still have the
// shape's mtimes, each at least dirTrustAge old at now.
func (s storeShape) matches(root string, now time.Time) bool {
	if s.projects == nil || !dirTrusted(root, s.root, now) {
		return false
	}
	for p, mtime := range s.projects {
		if !dirTrusted(filepath.Join(root, p), mtime, now) {
			return false
		}
	}
	return true
}

// unverified reports whether the index answers from a loaded cache that
// its first refresh has not checked yet.
func (ix *Indexed) unverified() bool {
	return ix.fresh.fromCache && !isDone(ix.fresh.verified)
}

// servedFirst reports whether a catalog query may answer now, before the
// first refresh has checked every entry, verifying what it serves.
func (ix *Indexed) servedFirst() bool {
	if !ix.unverified() {
		return false
	}
	ix.early.once.Do(func() { ix.early.ok.Store(ix.cachedShape.matches(ix.root, time.Now())) })
	return ix.early.ok.Load()
}

// verifyServed returns the catalog's Verify for a catalog taken before
// the first refresh finished, whose sessions' titles came from entries
// (nil where none): it reports whether the sessions served are the
// transcripts their entries indexed, and when one is not, it closes the
// early path.
func (ix *Indexed) verifyServed(entries []*entry) func(ctx context.Context, served []int32) bool {
	return func(ctx context.Context, served []int32) bool {
		if !ix.unverified() {
			return true
		}
		for _, i := range served {
			if ctx.Err() != nil {
				return false // the caller gives up; the early path stays
			}
			if e := entries[i]; e == nil || ix.entryChanged(e, earlySumBytes) {
				ix.early.ok.Store(false)
				return false
			}
		}
		return true
	}
}

// earlySumBytes bounds what an early answer reads of one served session
// whose signature alone changed (entryChanged), re-checked by each query
// until the first refresh; a larger one waits for that refresh, which
// reads it once.
var earlySumBytes int64 = 16 << 20
