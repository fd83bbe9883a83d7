package reference

import "strings"

// minTrigramSessions is the catalog size from which queries use a trigram
// index: below it one scan of the lowered strings costs well under a
// millisecond, less than building the index would ever save.
const minTrigramSessions = 2048

// trigramIndex maps every byte trigram of a catalog's lowered fields to
// the sessions (header indexes, ascending, each once) whose id, cwd or
// label contains it. A needle of three bytes or more can only be inside
// a field that holds every one of its trigrams, so the sessions of its
// rarest trigram are a superset of its matches, in catalog order; each is
// then checked against the real lowered strings, so answers are exactly
// those of the scan. Trigrams are of bytes, like the scan's
// strings.Index: non-ASCII text needs no special case.
//
// It also lists the sessions of each cwd and those without one, so a
// query finds the first sessions of each rank (same cwd, no cwd, other
// cwd) without walking the matches of the other ranks.
type trigramIndex struct {
	byCWD map[string][]int32
	noCWD []int32

	ids *trigramTable
	// dirty lists (ascending) the sessions whose lowered fields may
	// differ from those the postings were built from (a derived index):
	// they are candidates of every needle.
	dirty []int32
	// post[offs[t]:offs[t+1]] are the sessions of trigram id t.
	offs []int32
	post []int32
}

// trigramKey packs three bytes into one map key.
func trigramKey(a, b, c byte) uint32 { return uint32(a)<<16 | uint32(b)<<8 | uint32(c) }

// trigramTable maps trigram keys to dense ids: open addressing with
// linear probing, about 3x faster than a Go map here, where a build
// looks up every trigram of every session twice.
type trigramTable struct {
	keys  []uint32 // key+1; 0 is an empty slot
	vals  []int32
	shift uint
	n     int
}

func newTrigramTable() *trigramTable {
	const bits = 14
	return &trigramTable{keys: make([]uint32, 1<<bits), vals: make([]int32, 1<<bits), shift: 32 - bits}
}

// get returns key's id, or -1.
func (t *trigramTable) get(key uint32) int32 {
	mask := uint32(len(t.keys) - 1)
	for h := (key * 0x9e3779b1) >> t.shift; ; h = (h + 1) & mask {
		switch t.keys[h] {
		case key + 1:
			return t.vals[h]
		case 0:
			return -1
		}
	}
}

// put gives key the id v (key not present).
func (t *trigramTable) put(key uint32, v int32) {
	if 2*(t.n+1) > len(t.keys) {
		old := *t
		t.keys = make([]uint32, 2*len(old.keys))
		t.vals = make([]int32, 2*len(old.vals))
		t.shift--
		t.n = 0
		for i, k := range old.keys {
			if k != 0 {
				t.put(k-1, old.vals[i])
			}
		}
	}
	mask := uint32(len(t.keys) - 1)
	h := (key * 0x9e3779b1) >> t.shift
	for t.keys[h] != 0 {
		h = (h + 1) & mask
	}
	t.keys[h], t.vals[h] = key+1, v
	t.n++
}

// buildTrigramIndex indexes c.lowered (prepared). Trigrams never span two
// fields: a needle without catalogSep matches inside one field only.
func buildTrigramIndex(c *Catalog) *trigramIndex {
	ids := newTrigramTable()
	var counts []int32
	var last []int32 // last[t]: the last session counted for trigram t, +1
	// forEach calls f with the trigram id of every distinct trigram of
	// session i (add creates ids in the first pass).
	forEach := func(i int, add bool, f func(t int32)) {
		fl := c.fields[i]
		for _, s := range [3]string{c.lowered[fl.start:fl.idEnd], c.lowered[fl.idEnd+1 : fl.cwdEnd], c.lowered[fl.cwdEnd+1 : fl.end-1]} {
			for j := 0; j+3 <= len(s); j++ {
				k := trigramKey(s[j], s[j+1], s[j+2])
				t := ids.get(k)
				if t < 0 {
					if !add {
						continue
					}
					t = int32(len(counts))
					ids.put(k, t)
					counts = append(counts, 0)
					last = append(last, 0)
				}
				if last[t] == int32(i)+1 {
					continue // this session already holds it
				}
				last[t] = int32(i) + 1
				f(t)
			}
		}
	}
	for i := range c.Headers {
		forEach(i, true, func(t int32) { counts[t]++ })
	}
	offs := make([]int32, len(counts)+1)
	for t, n := range counts {
		offs[t+1] = offs[t] + n
	}
	post := make([]int32, offs[len(counts)])
	fill := counts[:0:0]
	fill = append(fill, offs[:len(counts)]...)
	clear(last)
	for i := range c.Headers {
		forEach(i, false, func(t int32) {
			post[fill[t]] = int32(i)
			fill[t]++
		})
	}
	byCWD := make(map[string][]int32)
	var noCWD []int32
	for i := range c.Headers {
		if cwd := c.Headers[i].CWD; cwd != nil {
			byCWD[*cwd] = append(byCWD[*cwd], int32(i))
		} else {
			noCWD = append(noCWD, int32(i))
		}
	}
	return &trigramIndex{byCWD: byCWD, noCWD: noCWD, ids: ids, offs: offs, post: post}
}

// indexedCandidates is catalogCandidates answered from the trigram index
// (needle empty, or usesTrigrams(needle)): the same sessions in the same
// order, found rank by rank. The answer is the first limit sessions in
// (rank, catalog order) that are not the target and contain the needle;
// each rank is collected from the shorter of its own list and the
// needle's candidates, and stops when the answer is full.
func indexedCandidates(c *Catalog, x *trigramIndex, target Target, needle string, limit int64) []Candidate {
	var cands []int32
	if needle != "" {
		var any bool
		if cands, any = x.candidates(needle); !any {
			return []Candidate{}
		}
	}
	rc := rankCollector{c: c, target: target, needle: needle, limit: limit}
	if target.CWD != nil {
		rc.collect(0, rc.shorter(x.byCWD[*target.CWD], cands))
	}
	rc.collect(1, rc.shorter(x.noCWD, cands))
	if needle == "" {
		rc.collectEvery(2)
	} else {
		rc.collect(2, cands)
	}
	out := make([]Candidate, len(rc.picked))
	for k, i := range rc.picked {
		out[k] = c.candidate(i)
	}
	return out
}

// rankCollector picks a catalog's answer rank by rank: the sessions of the
// rank being collected that are not the target and contain the needle,
// until limit are picked.
type rankCollector struct {
	c      *Catalog
	target Target
	needle string // "" matches every session
	limit  int64
	picked []int32
}

// shorter returns what to walk for a rank with its own list own: the
// shorter of own and the needle's candidates.
func (rc *rankCollector) shorter(own, cands []int32) []int32 {
	if rc.needle == "" || len(own) <= len(cands) {
		return own
	}
	return cands
}

func (rc *rankCollector) full() bool { return int64(len(rc.picked)) == rc.limit }

// try picks session i when it qualifies for rank r and reports whether the
// answer is full.
func (rc *rankCollector) try(r uint8, i int32) bool {
	h := &rc.c.Headers[i]
	if candidateRank(h.CWD, rc.target.CWD) != r || rc.target.isSelf(h.ID) || rc.needle != "" && !rc.c.matches(int(i), rc.needle) {
		return false
	}
	rc.picked = append(rc.picked, i)
	return rc.full()
}

// collect picks from list, in order, the sessions of rank r until the
// answer is full.
func (rc *rankCollector) collect(r uint8, list []int32) {
	if rc.full() {
		return
	}
	for _, i := range list {
		if rc.try(r, i) {
			return
		}
	}
}

// collectEvery is collect over every session of the catalog.
func (rc *rankCollector) collectEvery(r uint8) {
	if rc.full() {
		return
	}
	for i := range rc.c.Headers {
		if rc.try(r, int32(i)) {
			return
		}
	}
}

// candidates returns the sessions that may contain needle, ascending: the
// sessions of its rarest trigram (a superset of its matches among the
// sessions the postings were built from) and the dirty ones; false when
// none can (some trigram is in no session and none is dirty). needle has
// at least three bytes.
func (x *trigramIndex) candidates(needle string) ([]int32, bool) {
	var best []int32
	found := false
	for j := 0; j+3 <= len(needle); j++ {
		t := x.ids.get(trigramKey(needle[j], needle[j+1], needle[j+2]))
		if t < 0 {
			return x.dirty, len(x.dirty) > 0
		}
		p := x.post[x.offs[t]:x.offs[t+1]]
		if !found || len(p) < len(best) {
			best, found = p, true
		}
	}
	if len(x.dirty) == 0 {
		return best, found
	}
	return mergeSorted(best, x.dirty), true
}

// mergeSorted is the ascending union of two ascending lists.
func mergeSorted(a, b []int32) []int32 {
	out := make([]int32, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		switch {
		case a[0] < b[0]:
			out, a = append(out, a[0]), a[1:]
		case b[0] < a[0]:
			out, b = append(out, b[0]), b[1:]
		default:
			out, a, b = append(out, a[0]), a[1:], b[1:]
		}
	}
	out = append(out, a...)
	return append(out, b...)
}

// maxDirty is how many changed sessions a derived index may carry before
// a rebuild is cheaper than checking them on every query.
func maxDirty(n int) int { return max(256, n/64) }

// deriveTrigrams gives the prepared catalog c an index derived from its
// predecessor's (Follows) when both list the same sessions with the same
// cwds in the same order and few sessions' lowered fields changed; it
// reports whether it did.
func (c *Catalog) deriveTrigrams() bool {
	p := c.prev.Swap(nil)
	if p == nil {
		return false
	}
	px := p.tri.Load()
	if px == nil || len(p.Headers) != len(c.Headers) {
		return false
	}
	var dirty []int32
	limit := maxDirty(len(c.Headers))
	for i := range c.Headers {
		h, ph := &c.Headers[i], &p.Headers[i]
		if h.ID != ph.ID || (h.CWD == nil) != (ph.CWD == nil) || h.CWD != nil && *h.CWD != *ph.CWD {
			return false // the rank lists would be wrong
		}
		f, pf := c.fields[i], p.fields[i]
		if c.lowered[f.start:f.end] != p.lowered[pf.start:pf.end] {
			if dirty = append(dirty, int32(i)); len(dirty) > limit {
				return false
			}
		}
	}
	if dirty = mergeSorted(dirty, px.dirty); len(dirty) > limit {
		return false
	}
	d := *px
	d.dirty = dirty
	c.tri.Store(&d)
	return true
}

// usesTrigrams says whether a query for needle can be answered from the
// trigram index: three bytes or more and no field separator.
func usesTrigrams(needle string) bool {
	return len(needle) >= 3 && strings.IndexByte(needle, catalogSep) < 0
}

// trigrams returns the catalog's trigram index when it is built. A large
// catalog (minTrigramSessions or more) without one starts building it in
// the background, once: queries scan meanwhile, with the same answers.
func (c *Catalog) trigrams() *trigramIndex {
	if x := c.tri.Load(); x != nil || len(c.Headers) < minTrigramSessions {
		return x
	}
	if c.triStarted.CompareAndSwap(false, true) {
		if c.deriveTrigrams() {
			return c.tri.Load()
		}
		go c.buildTrigrams()
	}
	return nil
}

// buildTrigrams builds the trigram index of a prepared catalog, once, and
// returns when it is built (a concurrent call waits for the first). A
// catalog whose index was derived keeps it.
func (c *Catalog) buildTrigrams() {
	c.triOnce.Do(func() {
		if c.tri.Load() == nil {
			c.tri.Store(buildTrigramIndex(c))
		}
	})
}
