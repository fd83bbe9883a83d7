package sessionstore

import "sync"

// idLookup finds a listing's entries by session id: bySeg and shared group
// the entries by directory segment (the directories a read by id may load;
// group), byReadID maps an id to the entry a read of it loads. Built once, on first
// use, from all (the entries of the listing it belongs to, never modified):
// at 100,000 sessions that takes about 0.15 s, which a restart's first
// completion answer does not wait for (index_catalog.go answers it from the
// listing's own entries).
type idLookup struct {
	once sync.Once
	all  []*entry
	// bySeg holds the entry of a segment that names one directory, shared
	// the entries of a segment that names several (in several projects):
	// a slice for every segment would take 3 MB at 100,000 sessions.
	bySeg    map[string]*entry
	shared   map[string][]*entry
	byReadID map[string]*entry
}

// group returns the entries whose directory segment is seg.
func (l *idLookup) group(seg string) []*entry {
	if g, ok := l.shared[seg]; ok {
		return g
	}
	if e := l.bySeg[seg]; e != nil {
		return []*entry{e}
	}
	return nil
}

// find returns the entry a read of id loads in l's listing, or nil when
// that is not exactly one indexed transcript. Safe from any goroutine:
// the entries of a listing are never modified.
func (l *idLookup) find(ix *Indexed, id string) *entry {
	l.build(ix)
	if e := l.byReadID[id]; e != nil {
		return e
	}
	seg, err := EncodeSegment(id)
	if err != nil {
		return nil
	}
	return ix.findEntry(l.group(seg))
}

// build builds l's maps, once.
func (l *idLookup) build(ix *Indexed) {
	l.once.Do(func() {
		l.bySeg = make(map[string]*entry, len(l.all))
		l.shared = map[string][]*entry{}
		for _, e := range l.all {
			if first := l.bySeg[e.Seg]; first == nil {
				l.bySeg[e.Seg] = e
			} else if g, ok := l.shared[e.Seg]; ok {
				l.shared[e.Seg] = append(g, e)
			} else {
				l.shared[e.Seg] = []*entry{first, e}
			}
		}
		l.byReadID = make(map[string]*entry, len(l.bySeg))
		for seg := range l.bySeg {
			if e := ix.findEntry(l.group(seg)); e != nil && e.State.present() && e.ReadID != "" {
				l.byReadID[e.ReadID] = e
			}
		}
		l.all = nil
	})
}

// entryMap returns ix.entries, building it first from the entries a cache
// load left (at 100,000 sessions that takes about 50 ms, which the first
// refresh, not a restart's first answer, then spends). Callers hold what
// guards ix.entries (refreshMu or ix.mu, as before).
func (ix *Indexed) entryMap() map[dirKey]*entry {
	ix.entriesOnce.Do(func() {
		if ix.entriesFrom == nil {
			return
		}
		ix.entries = make(map[dirKey]*entry, len(ix.entriesFrom))
		for _, e := range ix.entriesFrom {
			ix.entries[e.dirKey()] = e
		}
		ix.entriesFrom = nil
	})
	return ix.entries
}
