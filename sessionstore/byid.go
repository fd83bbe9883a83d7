package sessionstore

import (
	"maps"
	"sync"
	"sync/atomic"

	"github.com/dsh-lsp/dsh-lsp/sessionstore/storepath"
)

// idLookup finds a listing's entries by session id. A session lies in the
// directory named by its id's segment (EncodeSegment), so bySeg and
// shared group the entries by segment (the directories a read by id may
// load; group) and a lookup encodes the id; the entries whose header
// passed the identity check from a directory with another segment (a
// symlinked path) are kept apart by id, in readElsewhere (the entry a
// read of the id loads) and listedElsewhere (the first listable entry of
// the id). A map of every id to its entry would take 5 MB at 100,000
// sessions. Built once, on first use, from all (the entries of the
// listing it belongs to, never modified): at 100,000 sessions that takes
// about 0.15 s, which a restart's first completion answer does not wait
// for (index_catalog.go answers it from the listing's own entries).
type idLookup struct {
	once sync.Once
	// built is set once the maps are (build).
	built atomic.Bool
	all   []*entry
	// bySeg holds the entry of a segment that names one directory, shared
	// the entries of a segment that names several (in several projects):
	// a slice for every segment would take 3 MB at 100,000 sessions.
	bySeg                          map[string]*entry
	shared                         map[string][]*entry
	readElsewhere, listedElsewhere map[string]*entry
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
	seg, err := storepath.EncodeSegment(id)
	if err != nil {
		return nil
	}
	e := ix.findEntry(l.group(seg))
	if e != nil && e.ReadID == id {
		return e
	}
	if o := l.readElsewhere[id]; o != nil {
		return o
	}
	return e
}

// listed returns the entry that lists id in l's listing (the first
// listable entry of id in key order), or nil.
func (l *idLookup) listed(ix *Indexed, id string) *entry {
	l.build(ix)
	var e *entry
	if seg, err := storepath.EncodeSegment(id); err == nil {
		for _, g := range l.group(seg) {
			if ix.listable(g) && g.ListedID == id {
				e = g
				break
			}
		}
	}
	if o := l.listedElsewhere[id]; o != nil && (e == nil || compareKeys(o, e) < 0) {
		return o
	}
	return e
}

// build builds l's maps, once.
func (l *idLookup) build(ix *Indexed) {
	l.once.Do(func() {
		l.bySeg = make(map[string]*entry, len(l.all))
		l.shared = map[string][]*entry{}
		for _, e := range l.all {
			if ix.listable(e) && !ownSegment(e.ListedID, e.Seg) {
				if _, ok := l.listedElsewhere[e.ListedID]; !ok {
					setKey(&l.listedElsewhere, e.ListedID, e)
				}
			}
			if first := l.bySeg[e.Seg]; first == nil {
				l.bySeg[e.Seg] = e
			} else if g, ok := l.shared[e.Seg]; ok {
				l.shared[e.Seg] = append(g, e)
			} else {
				l.shared[e.Seg] = []*entry{first, e}
			}
		}
		for seg := range l.bySeg {
			if e := ix.findEntry(l.group(seg)); e != nil && e.State.present() && e.ReadID != "" && !ownSegment(e.ReadID, seg) {
				setKey(&l.readElsewhere, e.ReadID, e)
			}
		}
		l.all = nil
		l.built.Store(true)
	})
}

// swapped returns the lookup of the listing all, which is l's with the
// entries of swap (old to new) replaced and nothing else changed: each new
// entry has its old one's key, listing header, read id, encoding, flags and
// readability (relistInPlace). Built, l's maps are copied with the entries
// swapped; else the new lookup builds from all on first use.
func (l *idLookup) swapped(all []*entry, swap map[*entry]*entry) *idLookup {
	if !l.built.Load() {
		return &idLookup{all: all}
	}
	sw := func(e *entry) *entry {
		if n := swap[e]; n != nil {
			return n
		}
		return e
	}
	n := &idLookup{bySeg: maps.Clone(l.bySeg), shared: maps.Clone(l.shared),
		readElsewhere: maps.Clone(l.readElsewhere), listedElsewhere: maps.Clone(l.listedElsewhere)}
	for old, e := range swap {
		if n.bySeg[old.Seg] == old {
			n.bySeg[old.Seg] = e
		}
		if g, ok := n.shared[old.Seg]; ok {
			g = append([]*entry(nil), g...)
			for i := range g {
				g[i] = sw(g[i])
			}
			n.shared[old.Seg] = g
		}
	}
	for _, m := range []map[string]*entry{n.readElsewhere, n.listedElsewhere} {
		for id, e := range m {
			m[id] = sw(e)
		}
	}
	n.once.Do(func() {})
	n.built.Store(true)
	return n
}

// ownSegment reports whether seg is id's own segment.
func ownSegment(id, seg string) bool {
	s, err := storepath.EncodeSegment(id)
	return err == nil && s == seg
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
