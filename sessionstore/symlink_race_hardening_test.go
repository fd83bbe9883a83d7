//go:build linux

package sessionstore_test

// A symlink race: a racer swaps a session directory for a symlink to an
// outside directory (atomically, renameat2 RENAME_EXCHANGE) while reads
// run. Opening a transcript must never follow a symlink below the root, so
// no read may return the outside session, and the outside transcript is
// never opened: checked on the content (a marker only the outside copy
// holds) and with inotify IN_OPEN/IN_ACCESS on the outside directory.

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// inotifyOpens counts opens and reads of files in one directory.
type inotifyOpens struct {
	fd  int
	buf []byte
}

func watchDirOpens(t *testing.T, dir string) *inotifyOpens {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Skipf("inotify unavailable: %v", err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_OPEN|unix.IN_ACCESS); err != nil {
		t.Fatal(err)
	}
	w := &inotifyOpens{fd: fd, buf: make([]byte, 64<<10)}
	w.names() // drain
	return w
}

// names returns the names of the files opened or read since the last
// call ("" for the directory itself).
func (w *inotifyOpens) names() []string {
	var out []string
	for {
		n, err := unix.Read(w.fd, w.buf)
		if n <= 0 || err != nil {
			return out
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			l := int(uint32(w.buf[off+12]) | uint32(w.buf[off+13])<<8 | uint32(w.buf[off+14])<<16 | uint32(w.buf[off+15])<<24)
			name := strings.TrimRight(string(w.buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+l]), "\x00")
			out = append(out, name)
			off += unix.SizeofInotifyEvent + l
		}
	}
}

func TestSymlinkRaceNeverReadsOutside(t *testing.T) {
	t.Parallel()
	const (
		inside  = "inside-content"
		outside = "OUTSIDE-MARKER"
	)
	reads := 2500
	switch {
	case testing.Short():
		reads = 1000
	case sessionstore.LongTests():
		reads = 10000
	}
	base := t.TempDir()
	root := filepath.Join(base, "sessions")
	id := "race"
	path := writeRawSession(t, root, id, inside)
	sessDir := filepath.Dir(path)
	// The outside session: same id, same layout, different content.
	outDir := filepath.Join(base, "outside")
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outDir, sessionstore.Raw.FileName()), []byte(hdrLine(id)+eventLines(id, outside)), 0o644); err != nil {
		t.Fatal(err)
	}
	// The symlink lives outside the root between swaps.
	holder := filepath.Join(base, "holder")
	if err := os.MkdirAll(holder, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(holder, "link")
	if err := os.Symlink(outDir, link); err != nil {
		t.Fatal(err)
	}
	if err := unix.Renameat2(unix.AT_FDCWD, link, unix.AT_FDCWD, sessDir, unix.RENAME_EXCHANGE); err != nil {
		t.Skipf("renameat2 RENAME_EXCHANGE: %v", err)
	}
	// Swap back: the session directory is real again.
	if err := unix.Renameat2(unix.AT_FDCWD, link, unix.AT_FDCWD, sessDir, unix.RENAME_EXCHANGE); err != nil {
		t.Fatal(err)
	}

	st, err := sessionstore.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	x := sessionstore.OpenWaited(t, root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache, NoWatch: true})
	ctx := context.Background()
	svc, err := reference.NewService(st, reference.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	watch := watchDirOpens(t, outDir)

	var (
		stop               atomic.Bool
		swaps              atomic.Int64
		wg                 sync.WaitGroup
		mu                 sync.Mutex
		leaked, ok, failed int
		leakedVia          []string
	)
	wg.Add(1)
	go func() { // the racer
		defer wg.Done()
		for !stop.Load() {
			if err := unix.Renameat2(unix.AT_FDCWD, link, unix.AT_FDCWD, sessDir, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("swap: %v", err)
				return
			}
			swaps.Add(1)
			runtime.Gosched()
		}
	}()
	text := "see " + mentionOf(t, id)
	target := reference.Target{}
	type reader struct {
		name string
		read func() (string, error)
	}
	surface := func(src reference.Source) func() (string, error) {
		return func() (string, error) {
			s, err := src.ReadSurface(ctx, id)
			if err != nil {
				return "", err
			}
			return string(sessionstore.MarshalSurface(s)), nil
		}
	}
	readers := []reader{
		{"prepare", func() (string, error) {
			pt, err := svc.PrepareText(ctx, target, text)
			if err != nil {
				return "", err
			}
			b, err := reference.MarshalPrepared(pt)
			return string(b), err
		}},
		{"store ReadSurface", surface(st)},
		{"index ReadSurface", surface(x)},
		{"store ReadTitles", func() (string, error) {
			r, err := st.ReadTitles(ctx, []string{id})
			if err != nil || len(r) != 1 {
				return "", err
			}
			if r[0].Err != nil {
				return "", r[0].Err
			}
			if r[0].Title == nil {
				return "", nil
			}
			return *r[0].Title, nil
		}},
	}
	// exercised: the racer swapped often enough and reads both got
	// through and were refused. On a busy machine the racer may barely
	// run during the first reads, so readers go on past reads (up to
	// 10 × reads) until it has, instead of failing "not exercised".
	exercised := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return swaps.Load() >= 100 && ok > 0 && failed > 0
	}
	var rw sync.WaitGroup
	for _, r := range readers {
		rw.Add(1)
		go func(r reader) {
			defer rw.Done()
			for i := 0; i < reads || (i < 10*reads && !exercised()); i++ {
				if i >= reads {
					runtime.Gosched() // let a starved racer run
				}
				out, err := r.read()
				mu.Lock()
				switch {
				case strings.Contains(out, outside):
					leaked++
					leakedVia = append(leakedVia, r.name)
				case err != nil:
					failed++
				default:
					ok++
				}
				mu.Unlock()
			}
		}(r)
	}
	rw.Wait()
	stop.Store(true)
	wg.Wait()
	opened := watch.names()
	var outsideOpens int
	for _, n := range opened {
		if n == sessionstore.Raw.FileName() {
			outsideOpens++
		}
	}
	t.Logf("%d reads (at least %d per reader, %d readers incl. prepares), %d swaps: %d ok, %d failed (symlinked directory refused), %d leaked; outside transcript opened/read %d times",
		ok+failed+leaked, reads, len(readers), swaps.Load(), ok, failed, leaked, outsideOpens)
	if leaked > 0 {
		t.Errorf("%d reads returned the outside session (via %v)", leaked, leakedVia[:min(len(leakedVia), 5)])
	}
	if outsideOpens > 0 {
		t.Errorf("the outside transcript was opened or read %d times", outsideOpens)
	}
	if swaps.Load() < 100 || failed == 0 || ok == 0 {
		t.Errorf("the race was not exercised: %d swaps, %d ok, %d failed", swaps.Load(), ok, failed)
	}

	// The tracer sees an open of the outside transcript when one happens.
	f, err := os.Open(filepath.Join(outDir, sessionstore.Raw.FileName()))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	seen := false
	for _, n := range watch.names() {
		seen = seen || n == sessionstore.Raw.FileName()
	}
	if !seen {
		t.Errorf("inotify did not report a deliberate open of the outside transcript: the check above proves nothing")
	}
}
