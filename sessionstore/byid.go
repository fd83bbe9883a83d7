package sessionstore

import "sync"

// idLookup finds a listing's entries by session id: bySeg groups the
// entries by directory segment (the directories a read by id may load),
// byReadID maps an id to the entry a read of it loads. Built once, on first
// use, from all (the entries of the listing it belongs to, never modified):
// at 100,000 sessions that takes about 0.15 s, which a restart's first
// completion answer does not wait for (index_catalog.go answers it from the
// listing's own entries).
type idLookup struct {
	once     sync.Once
	all      []*entry
	bySeg    map[string][]*entry
	byReadID map[string]*entry
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
	return ix.findEntry(l.bySeg[seg])
}

// build builds l's maps, once.
func (l *idLookup) build(ix *Indexed) {
	l.once.Do(func() {
		l.bySeg = make(map[string][]*entry, len(l.all))
		for _, e := range l.all {
			l.bySeg[e.Seg] = append(l.bySeg[e.Seg], e)
		}
		l.byReadID = make(map[string]*entry, len(l.bySeg))
		for _, group := range l.bySeg {
			if e := ix.findEntry(group); e != nil && e.State.present() && e.ReadID != "" {
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
