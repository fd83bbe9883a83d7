//go:build linux

package watchbudget

import (
	"fmt"
	"testing"

	"golang.org/x/sys/unix"
)

func TestCapIsAShareOfTheUserBudget(t *testing.T) {
	for _, c := range []struct{ limit, want int }{
		{8192, 1024},     // the kernel default before Linux 5.11
		{192536, 24067},  // a large budget (24 GB of memory): the share
		{1 << 30, 65536}, // never more than the ceiling
		{80, 10},
		{3, 1}, // at least the root
	} {
		if got := Cap(c.limit); got != c.want {
			t.Errorf("Cap(%d) = %d, want %d", c.limit, got, c.want)
		}
	}
	if got, want := Max(), Cap(userWatchLimit()); got != want {
		t.Errorf("Max() = %d, want Cap of the user's budget, %d", got, want)
	}
}

func TestExhaustedIsOutOfWatchesOrMemory(t *testing.T) {
	for _, err := range []error{unix.ENOSPC, fmt.Errorf("adding a watch: %w", unix.ENOMEM)} {
		if !Exhausted(err) {
			t.Errorf("Exhausted(%v) = false, want true", err)
		}
	}
}

func TestReliableForAMissingDirectory(t *testing.T) {
	if !Reliable("/nonexistent/dsh-lsp") {
		t.Error("Reliable(a missing directory) = false, want true (its watch fails by itself)")
	}
}
