//go:build !linux

package hugepage

// advise does nothing: only Linux's transparent huge pages are asked for.
func advise([]byte) {}
