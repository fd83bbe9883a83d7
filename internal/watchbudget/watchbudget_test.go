package watchbudget

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"
)

func TestMaxWatchesAtLeastTheRoot(t *testing.T) {
	if n := Max(); n < 1 {
		t.Errorf("Max() = %d, want at least 1 (the store root)", n)
	}
}

func TestExhaustedByDescriptorLimits(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("adding a watch: %w", syscall.EMFILE), true},
		{syscall.ENFILE, true},
		{syscall.ENOENT, false},
		{syscall.EACCES, false},
	} {
		if got := Exhausted(c.err); got != c.want {
			t.Errorf("Exhausted(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestReliableOnALocalDirectory(t *testing.T) {
	// Windows polls (fsnotify's backend was seen to hang there).
	want := runtime.GOOS != "windows"
	if got := Reliable(t.TempDir()); got != want {
		t.Errorf("Reliable(a temporary directory) on %s = %v, want %v", runtime.GOOS, got, want)
	}
}
