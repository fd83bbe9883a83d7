// Package hugepage asks the kernel to back large arrays with transparent
// huge pages where it gives them only on request (Linux's "madvise" mode,
// the default of several distributions). A restart of the server on the
// persisted index of a large store fills a few arrays of tens of megabytes
// at once (the cache file's head, the entries, the listing, the catalog's
// titles): in 4 KiB pages every page is a fault of its own, which on a
// virtual machine costs 10 µs or more; a 2 MiB page is one fault for 512
// of them. bench/README.md ("A restart's first answer in about half the time")
// has the figures.
package hugepage

import "unsafe"

// hugePageBytes is the size of a transparent huge page on the platforms
// that advise (x86-64 and arm64 with 4 KiB base pages).
const hugePageBytes = 2 << 20

// Make returns make([]T, n), the whole huge pages inside its memory
// advised to be huge pages (an array under 2 MiB has none). The advice
// changes only how the memory is backed, never its contents, and never
// reaches past the array.
func Make[T any](n int) []T {
	s := make([]T, n)
	size := uintptr(n) * unsafe.Sizeof(*new(T))
	if size < hugePageBytes {
		return s
	}
	p := unsafe.Pointer(unsafe.SliceData(s))
	skip := -uintptr(p) & (hugePageBytes - 1) // to the first huge page boundary; < size
	if whole := (size - skip) &^ (hugePageBytes - 1); whole > 0 {
		advise(unsafe.Slice((*byte)(unsafe.Add(p, skip)), whole))
	}
	return s
}
