//go:build !linux

package sessionstore_test

import (
	"runtime"
	"testing"
)

// openWatch tracks opens with inotify, which only Linux has: elsewhere the
// hostile-store tests still check what is listed and read, but not which
// files were opened.
type openWatch struct{}

func watchOpens(t *testing.T, roots ...string) *openWatch {
	t.Helper()
	t.Logf("no open tracking on %s (inotify is Linux-only): checking listings and reads only", runtime.GOOS)
	return &openWatch{}
}

func (w *openWatch) events() []string { return nil }
