package contentindex

import (
	"cmp"
	"slices"
	"strings"

	"github.com/dsh-lsp/dsh-lsp/internal/bytesig"
)

// freshLimit is how many rows a titleSet adds to fresh before it slices
// every row's signature again (tens of milliseconds at 100,000 sessions):
// a search scans fresh's signatures one by one (32 KB at the limit).
const freshLimit = 1024

// titleRow is one indexed session's lowered title.
type titleRow struct {
	rowid  int64
	ltitle string
}

// titleSet is the indexed sessions' lowered titles by ascending rowid
// (most recently indexed first), as the title pass of a search reads them
// without reading the docs table. Rows indexed since the signatures were
// sliced (fresh, with theirs) come first: a sync gives every row it adds a
// rowid below all others. The others (base) are found through their
// bit-sliced signatures, which read a few bitmaps rather than every row;
// those removed since are marked dead. Immutable: a sync makes a new one.
type titleSet struct {
	fresh     []titleRow
	freshSigs []bytesig.Sig
	base      []titleRow
	baseSigs  *bytesig.Sliced
	// dead has bit i set when base[i] is no longer indexed.
	dead  []uint64
	ndead int
}

// newTitleSet returns the set of rows (ascending rowid), all in base.
func newTitleSet(rows []titleRow) *titleSet {
	return &titleSet{
		base:     rows,
		baseSigs: bytesig.SliceOf(len(rows), func(i int) bytesig.Sig { return bytesig.Of(rows[i].ltitle) }),
	}
}

// len is the number of indexed sessions in t.
func (t *titleSet) len() int { return len(t.fresh) + len(t.base) - t.ndead }

// with returns t with the rows added (ascending rowid, each below every
// row of t) and without the rows whose rowids are gone.
func (t *titleSet) with(added []titleRow, gone map[int64]bool) *titleSet {
	n := &titleSet{base: t.base, baseSigs: t.baseSigs, dead: t.dead, ndead: t.ndead}
	n.fresh = slices.Grow(slices.Clone(added), len(t.fresh))
	for _, r := range added {
		n.freshSigs = append(n.freshSigs, bytesig.Of(r.ltitle))
	}
	for i, r := range t.fresh {
		if !gone[r.rowid] {
			n.fresh = append(n.fresh, r)
			n.freshSigs = append(n.freshSigs, t.freshSigs[i])
		}
	}
	copied := false
	for r := range gone {
		i, ok := slices.BinarySearchFunc(t.base, r, func(row titleRow, r int64) int { return cmp.Compare(row.rowid, r) })
		if !ok || n.dead != nil && n.dead[i/64]&(1<<(i%64)) != 0 {
			continue
		}
		if !copied {
			n.dead = make([]uint64, (len(t.base)+63)/64)
			copy(n.dead, t.dead)
			copied = true
		}
		n.dead[i/64] |= 1 << (i % 64)
		n.ndead++
	}
	if len(n.fresh) <= freshLimit && n.ndead <= len(n.base)/4 {
		return n
	}
	rows := make([]titleRow, 0, n.len())
	n.each(func(r *titleRow) bool { rows = append(rows, *r); return true }, nil)
	return newTitleSet(rows)
}

// each calls fn with the rows of t in ascending rowid order, until fn
// returns false; with want, only those whose signature holds it (the
// others cannot hold a term of want).
func (t *titleSet) each(fn func(r *titleRow) bool, want *bytesig.Sig) {
	for i := range t.fresh {
		if want == nil || t.freshSigs[i].Holds(want) {
			if !fn(&t.fresh[i]) {
				return
			}
		}
	}
	var all bytesig.Sig
	if want == nil {
		want = &all
	}
	t.baseSigs.Each(want, func(i int) bool {
		if t.dead != nil && t.dead[i/64]&(1<<(i%64)) != 0 {
			return true
		}
		return fn(&t.base[i])
	})
}

// matching calls fn with the rowids of the rows whose lowered title holds
// every lowered term, in ascending rowid order, until fn returns false.
func (t *titleSet) matching(lterms []string, fn func(rowid int64) bool) {
	var want bytesig.Sig
	for _, lt := range lterms {
		want.Add(lt)
	}
	t.each(func(r *titleRow) bool {
		for _, lt := range lterms {
			if !strings.Contains(r.ltitle, lt) {
				return true
			}
		}
		return fn(r.rowid)
	}, &want)
}
