package sessionstore

import (
	"sort"

	"github.com/dsh-lsp/dsh-lsp/reference"
)

// SortHeaders sorts headers in listSessions order (spec §9): createdAt
// descending, ties by id in localeCompare order; the sort is stable, so
// ids that collate equal keep their input (enumeration) order.
func SortHeaders(hs []reference.SessionHeader) {
	compare, release := reference.LocaleComparer()
	defer release()
	sort.SliceStable(hs, func(i, j int) bool {
		if hs[i].CreatedAt != hs[j].CreatedAt {
			return hs[i].CreatedAt > hs[j].CreatedAt
		}
		return compare(hs[i].ID, hs[j].ID) < 0
	})
}
