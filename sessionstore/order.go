package sessionstore

import (
	"sort"
	"sync"

	"github.com/dsh-lsp/dsh-lsp/reference"
	"golang.org/x/text/collate"
	"golang.org/x/text/language"
)

// collators are ICU-root collators (JS String.prototype.localeCompare
// with the default locale); a collate.Collator is not safe for concurrent
// use, hence the pool.
var collators = sync.Pool{New: func() any { return collate.New(language.Und) }}

// CompareIDs compares two session ids like JS a.localeCompare(b) (ICU root
// collation, not code-unit order).
func CompareIDs(a, b string) int {
	c := collators.Get().(*collate.Collator)
	defer collators.Put(c)
	return c.CompareString(a, b)
}

// SortHeaders sorts headers in listSessions order (spec §9): createdAt
// descending, ties by id in localeCompare order; the sort is stable, so
// ids that collate equal keep their input (enumeration) order.
func SortHeaders(hs []reference.SessionHeader) {
	c := collators.Get().(*collate.Collator)
	defer collators.Put(c)
	sort.SliceStable(hs, func(i, j int) bool {
		if hs[i].CreatedAt != hs[j].CreatedAt {
			return hs[i].CreatedAt > hs[j].CreatedAt
		}
		return c.CompareString(hs[i].ID, hs[j].ID) < 0
	})
}
