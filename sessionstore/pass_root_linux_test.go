package sessionstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestAPassOpensTheRootOnce: a first pass opens every transcript from the
// root it holds open (beneath.OpenRoot), instead of opening the root
// again for each. The kernel counts the opens: inotify reports each open
// of the root directory itself (IN_OPEN without a name); it merges an
// event with an identical one queued just before it, so closes are
// watched too, to keep consecutive opens apart.
func TestAPassOpensTheRootOnce(t *testing.T) {
	root := t.TempDir()
	for i := range 200 {
		writeTitled(t, root, fmt.Sprintf("s%03d", i), int64(i+1), "t")
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		t.Skipf("no inotify: %v", err)
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, root, unix.IN_OPEN|unix.IN_CLOSE_NOWRITE); err != nil {
		t.Skipf("no inotify watch: %v", err)
	}
	x := OpenWaited(t, root, IndexOptions{CacheDir: NoCache, NoWatch: true, RefreshInterval: time.Hour})
	cat, err := x.Catalog(context.Background())
	if err != nil || len(cat.Headers) != 200 {
		t.Fatalf("the pass indexed %d sessions (%v), want 200", len(cat.Headers), err)
	}
	opens := 0
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(fd, buf)
		if errors.Is(err, unix.EAGAIN) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			mask := binary.NativeEndian.Uint32(buf[off+4:])
			nameLen := int(binary.NativeEndian.Uint32(buf[off+12:]))
			if mask&unix.IN_Q_OVERFLOW != 0 {
				t.Fatal("inotify queue overflowed")
			}
			if mask&unix.IN_OPEN != 0 && nameLen == 0 {
				opens++
			}
			off += unix.SizeofInotifyEvent + nameLen
		}
	}
	// The held root, the listing of the root, a few checks; not one per
	// transcript.
	if opens == 0 || opens > 10 {
		t.Errorf("the pass opened the root %d times for 200 transcripts, want 1-10", opens)
	}
	t.Logf("the root was opened %d times", opens)
}
