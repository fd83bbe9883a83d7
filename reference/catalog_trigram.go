package reference

import (
	"encoding/binary"
	"iter"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/dsh-lsp/dsh-lsp/internal/bytesig"
)

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
// strings.Contains: non-ASCII text needs no special case.
//
// It also lists the sessions of each cwd and those without one, so a
// query finds the first sessions of each rank (same cwd, no cwd, other
// cwd) without walking the matches of the other ranks.
type trigramIndex struct {
	// byCWD[k] lists the sessions of the catalog's cwds[k]; noCWD those
	// without one.
	byCWD [][]int32
	noCWD []int32

	ids *trigramTable
	// dirty lists (ascending) the sessions whose lowered fields may
	// differ from those the postings were built from (a derived index):
	// they are candidates of every needle.
	dirty []int32
	// The sessions of trigram id t are count[t] uvarints in
	// post[offs[t]:offs[t+1]], each the gap from the previous session
	// minus one (the first: the session itself). Sessions sharing a cwd or
	// title words are close together, so most take one byte, not four.
	offs  []uint32
	count []int32
	post  []byte
	// sigs holds the signature of each session's lowered id and label:
	// needles too short for trigrams test it before the strings (at
	// 100,000 sessions a two-letter query found in none took 40 ms to
	// scan).
	sigs []bytesig.Sig
}

// sessionSig is the signature of session i of c: of its lowered id and
// label.
func sessionSig(c *Catalog, i int) bytesig.Sig {
	g := bytesig.Of(c.lowID(i))
	g.Add(c.lowLabels[i])
	return g
}

// byteSigs returns the signature of every session of c (prepared).
func byteSigs(c *Catalog) []bytesig.Sig {
	sigs := make([]bytesig.Sig, len(c.Headers))
	for i := range sigs {
		sigs[i] = sessionSig(c, i)
	}
	return sigs
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

// trigramBuilder makes a trigramIndex in two passes over the sessions:
// the first assigns trigram ids and sizes each one's postings, the second
// writes them.
type trigramBuilder struct {
	c   *Catalog
	ids *trigramTable
	// tris[t] is trigram t's build state, one struct so that giving a
	// session a trigram touches one cache line.
	tris []builderTrigram
	// cwdTris[k] are the trigram ids of cwds[k] (nil until first seen):
	// a cwd shared by many sessions is hashed once.
	cwdTris [][]int32
	writing bool // the second pass
	post    []byte
}

// builderTrigram is one trigram's build state.
type builderTrigram struct {
	// last is the last session given the trigram, plus one (0: none).
	last  int32
	count int32
	// pos is the size of its postings in the first pass, then where its
	// next session goes in post.
	pos uint32
}

// buildTrigramIndex indexes the lowered fields of c (prepared). It
// returns nil when the postings would not fit 32-bit offsets (queries
// then scan).
func buildTrigramIndex(c *Catalog) *trigramIndex {
	b := &trigramBuilder{c: c, ids: newTrigramTable(), cwdTris: make([][]int32, len(c.cwds))}
	for i := range c.Headers {
		b.session(int32(i))
	}
	offs := make([]uint32, len(b.tris)+1)
	count := make([]int32, len(b.tris))
	total := 0
	for t := range b.tris {
		tr := &b.tris[t]
		total += int(tr.pos)
		if total > math.MaxUint32 {
			return nil
		}
		offs[t+1] = uint32(total)
		count[t] = tr.count
		*tr = builderTrigram{pos: offs[t]}
	}
	b.post = make([]byte, total)
	b.writing = true
	for i := range c.Headers {
		b.session(int32(i))
	}
	x := &trigramIndex{ids: b.ids, offs: offs, count: count, post: b.post, sigs: byteSigs(c)}
	x.byCWD, x.noCWD = cwdLists(c)
	return x
}

// cwdLists returns the sessions of each of c's cwds and those without
// one, in catalog order, in one allocation.
func cwdLists(c *Catalog) (byCWD [][]int32, noCWD []int32) {
	ends := make([]int, len(c.cwds)+1) // ends[k+1]: sessions of cwds[0..k]
	for _, k := range c.cwdOf {
		if k >= 0 {
			ends[k+1]++
		}
	}
	for k := range c.cwds {
		ends[k+1] += ends[k]
	}
	all := make([]int32, len(c.cwdOf))
	byCWD = make([][]int32, len(c.cwds))
	for k := range byCWD {
		byCWD[k] = all[ends[k]:ends[k]:ends[k+1]]
	}
	noCWD = all[ends[len(c.cwds)]:ends[len(c.cwds)]]
	for i, k := range c.cwdOf {
		if k >= 0 {
			byCWD[k] = append(byCWD[k], int32(i))
		} else {
			noCWD = append(noCWD, int32(i))
		}
	}
	return byCWD, noCWD
}

// session gives session i its trigrams. Trigrams never span two fields:
// a needle matches inside one field only.
func (b *trigramBuilder) session(i int32) {
	b.field(i, b.c.lowID(int(i)))
	if k := b.c.cwdOf[i]; k >= 0 {
		if b.cwdTris[k] == nil {
			low := b.c.cwds[k].low
			tris := make([]int32, 0, max(len(low)-2, 0))
			for j := 0; j+3 <= len(low); j++ {
				tris = append(tris, b.id(trigramKey(low[j], low[j+1], low[j+2])))
			}
			b.cwdTris[k] = tris
		}
		for _, t := range b.cwdTris[k] {
			b.add(i, t)
		}
	}
	b.field(i, b.c.lowLabels[i])
}

// field gives session i the trigrams of s.
func (b *trigramBuilder) field(i int32, s string) {
	for j := 0; j+3 <= len(s); j++ {
		b.add(i, b.id(trigramKey(s[j], s[j+1], s[j+2])))
	}
}

// id returns key's trigram id, creating it in the first pass (the second
// sees only keys the first created).
func (b *trigramBuilder) id(key uint32) int32 {
	t := b.ids.get(key)
	if t < 0 {
		t = int32(len(b.tris))
		b.ids.put(key, t)
		b.tris = append(b.tris, builderTrigram{})
	}
	return t
}

// add gives session i trigram t, once per session.
func (b *trigramBuilder) add(i, t int32) {
	tr := &b.tris[t]
	if tr.last == i+1 {
		return
	}
	gap := uint64(i - tr.last)
	tr.last = i + 1
	if b.writing {
		tr.pos += uint32(binary.PutUvarint(b.post[tr.pos:], gap))
		return
	}
	tr.count++
	tr.pos += uint32(bits.Len64(gap|1)+6) / 7
}

// postingList is a list of sessions, ascending: a trigram's postings and
// a derived index's dirty sessions, merged.
type postingList struct {
	enc   []byte // uvarint gaps as in trigramIndex.post
	n     int    // sessions in enc
	dirty []int32
}

// len is at least the number of sessions in the list.
func (p postingList) len() int { return p.n + len(p.dirty) }

// all yields the list's sessions, ascending, each once.
func (p postingList) all() iter.Seq[int32] {
	return func(yield func(int32) bool) {
		dirty := p.dirty
		prev := int32(-1)
		for enc := p.enc; len(enc) > 0; {
			v, k := binary.Uvarint(enc)
			if k <= 0 {
				break // not written by the builder: cannot happen
			}
			enc = enc[k:]
			prev += int32(v) + 1
			for len(dirty) > 0 && dirty[0] < prev {
				if !yield(dirty[0]) {
					return
				}
				dirty = dirty[1:]
			}
			if len(dirty) > 0 && dirty[0] == prev {
				dirty = dirty[1:]
			}
			if !yield(prev) {
				return
			}
		}
		for _, i := range dirty {
			if !yield(i) {
				return
			}
		}
	}
}

// indexedPicks is catalogPicks answered from the trigram
// index: the same sessions in the same order, found rank by rank. The
// answer is the first limit sessions in (rank, catalog order) that are
// not the target and contain the needle; each rank is collected from the
// shorter of its own list and, for a needle of three bytes or more, the
// needle's candidates, and stops when the answer is full.
func indexedPicks(c *Catalog, x *trigramIndex, target Target, needle string, limit int64) []int32 {
	var cands postingList
	useCands := usesTrigrams(needle)
	if useCands {
		var any bool
		if cands, any = x.candidates(needle); !any {
			return nil
		}
	}
	rc := rankCollector{c: c, target: target, targetCWD: -2, needle: needle, limit: limit}
	if !useCands && needle != "" {
		rc.filterBySig(x)
	}
	if target.CWD != nil {
		if k, ok := c.cwdIndex[*target.CWD]; ok {
			rc.targetCWD = k
			rc.collect(0, rc.shorter(x.byCWD[k], cands, useCands))
		}
	}
	rc.collect(1, rc.shorter(x.noCWD, cands, useCands))
	if useCands {
		rc.collect(2, cands.all())
	} else {
		rc.collect(2, func(yield func(int32) bool) {
			for i := range c.Headers {
				if !yield(int32(i)) {
					return
				}
			}
		})
	}
	return rc.picked
}

// rankCollector picks a catalog's answer rank by rank: the sessions of the
// rank being collected that are not the target and contain the needle,
// until limit are picked.
type rankCollector struct {
	c      *Catalog
	target Target
	// targetCWD is the index of the target's cwd in c.cwds; -2 when no
	// session has it (or the target has none), so no session ranks 0.
	targetCWD int32
	needle    string // "" matches every session
	limit     int64
	picked    []int32
	// For a needle shorter than a trigram (filterBySig): the index's
	// signatures, the needle's, and which cwds hold it.
	sigs   []bytesig.Sig
	want   bytesig.Sig
	cwdHit []bool
}

// filterBySig makes collect skip the sessions whose signature in x lacks
// the needle's, unless their cwd holds it.
func (rc *rankCollector) filterBySig(x *trigramIndex) {
	rc.sigs = x.sigs
	rc.want = bytesig.Of(rc.needle)
	rc.cwdHit = make([]bool, len(rc.c.cwds))
	for k := range rc.c.cwds {
		rc.cwdHit[k] = strings.Contains(rc.c.cwds[k].low, rc.needle)
	}
}

// mayMatch reports whether session i may contain the needle.
func (rc *rankCollector) mayMatch(i int32) bool {
	if rc.sigs == nil {
		return true
	}
	if k := rc.c.cwdOf[i]; k >= 0 && rc.cwdHit[k] {
		return true
	}
	return rc.sigs[i].Holds(&rc.want)
}

// shorter returns what to walk for a rank with its own list own: the
// shorter of own and, when useCands, the needle's candidates.
func (rc *rankCollector) shorter(own []int32, cands postingList, useCands bool) iter.Seq[int32] {
	if useCands && cands.len() < len(own) {
		return cands.all()
	}
	return slices.Values(own)
}

func (rc *rankCollector) full() bool { return int64(len(rc.picked)) == rc.limit }

// rank is candidateRank of session i for the target.
func (rc *rankCollector) rank(i int32) uint8 {
	switch k := rc.c.cwdOf[i]; k {
	case -1:
		return 1
	case rc.targetCWD:
		return 0
	default:
		return 2
	}
}

// collect picks from list, in order, the sessions of rank r until the
// answer is full.
func (rc *rankCollector) collect(r uint8, list iter.Seq[int32]) {
	if rc.full() {
		return
	}
	for i := range list {
		if rc.rank(i) != r || rc.needle != "" && (!rc.mayMatch(i) || !rc.c.matches(int(i), rc.needle)) || rc.target.isSelf(rc.c.Headers[i].ID) {
			continue
		}
		rc.picked = append(rc.picked, i)
		if rc.full() {
			return
		}
	}
}

// candidates returns the sessions that may contain needle, ascending: the
// sessions of its rarest trigram (a superset of its matches among the
// sessions the postings were built from) and the dirty ones; false when
// none can (some trigram is in no session and none is dirty). needle has
// at least three bytes.
func (x *trigramIndex) candidates(needle string) (postingList, bool) {
	best := int32(-1)
	for j := 0; j+3 <= len(needle); j++ {
		t := x.ids.get(trigramKey(needle[j], needle[j+1], needle[j+2]))
		if t < 0 {
			return postingList{dirty: x.dirty}, len(x.dirty) > 0
		}
		if best < 0 || x.count[t] < x.count[best] {
			best = t
		}
	}
	return postingList{enc: x.post[x.offs[best]:x.offs[best+1]], n: int(x.count[best]), dirty: x.dirty}, true
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
		// Equal ids and labels lower to equal strings; comparing the
		// originals is mostly a pointer check (the index keeps the same
		// strings from one listing to the next), not a memory compare.
		if c.label(i) != p.label(i) {
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
	d.sigs = slices.Clone(px.sigs)
	for _, i := range dirty {
		d.sigs[i] = sessionSig(c, int(i))
	}
	c.tri.Store(&d)
	return true
}

// usesTrigrams says whether the trigram index narrows a query for needle
// to its candidates: three bytes or more. Shorter needles are answered
// from the index's rank lists alone.
func usesTrigrams(needle string) bool { return len(needle) >= 3 }

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

// buildTrigrams builds the trigram index of a prepared catalog, or
// decodes it from SearchIndex when that fits, once, and returns when it
// is there (a concurrent call waits for the first). A catalog whose index
// was derived keeps it.
func (c *Catalog) buildTrigrams() {
	c.triOnce.Do(func() {
		if c.tri.Load() != nil {
			return
		}
		defer func() { c.SearchIndex = nil }()
		if r := c.searchRest; r != nil {
			// prepare took the lowered strings from SearchIndex.
			c.searchRest = nil
			x, err := c.decodeTrigrams(r)
			if err == nil {
				c.tri.Store(x)
				return
			}
			c.searchIndexErr = err
		}
		c.tri.Store(buildTrigramIndex(c))
	})
}

// SearchIndexGiven reports whether the catalog was given a SearchIndex
// (taken or not: SearchIndexErr). Call it after Prepare returned.
func (c *Catalog) SearchIndexGiven() bool { return c.searchGiven }

// SearchIndexErr reports why SearchIndex was not taken, nil when it was,
// is unset or the catalog is too small for an index. Call it after
// Prepare returned, which orders it after the decode.
func (c *Catalog) SearchIndexErr() error { return c.searchIndexErr }
