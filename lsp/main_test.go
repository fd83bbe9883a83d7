package lsp

import (
	"os"
	"testing"
)

// TestMain points the user cache directory at a temporary directory, so
// the index caches of the many test stores never land in ~/.cache/dsh-lsp
// (XDG_CACHE_HOME; LocalAppData on Windows).
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dsh-lsp-test-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", dir)
	os.Setenv("LocalAppData", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
