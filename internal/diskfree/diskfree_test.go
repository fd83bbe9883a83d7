package diskfree

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFree(t *testing.T) {
	n, err := Free(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if n <= 0 {
		t.Errorf("Free(temp dir) = %d, want > 0 on a writable file system", n)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	if _, err := Free(missing); err == nil {
		t.Errorf("Free(%s) succeeded for a missing directory", missing)
	} else if _, statErr := os.Stat(missing); statErr == nil {
		t.Fatal("the missing directory exists")
	}
}
