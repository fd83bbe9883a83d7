package sessionstore_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// TestVersionNamesTheTranscriptAReadLoads: a session's Version changes
// whenever its transcript is appended to, truncated, replaced or rewritten
// in place with a new modification time; a transcript rewritten in place
// keeping size and modification time (only the tail check tells), one
// modified moments ago, and an unknown session have none; an untouched
// session keeps its version.
func TestVersionNamesTheTranscriptAReadLoads(t *testing.T) {
	const id = "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0abc"
	cwd := "/home/alice/versions"
	var b strings.Builder
	fmt.Fprintf(&b, `{"type":"session","version":0,"id":%q,"createdAt":1786000000000,"cwd":%q,"delegationDepth":0}`+"\n", id, cwd)
	for i := range 3 {
		fmt.Fprintf(&b, `{"type":"user/message","seq":%d,"time":1786000000001,"surfaceOp":"append","data":{"role":"user","id":"m%d","source":{"kind":"user"},"content":[{"type":"text","text":"hello %d"}]}}`+"\n", i, i, i)
	}
	log := []byte(b.String())
	last := bytes.LastIndex(log[:len(log)-1], []byte("\n")) + 1
	old := time.Now().Add(-time.Hour).Truncate(time.Second).Add(100 * time.Millisecond)

	for _, tc := range []struct {
		name string
		// change changes the transcript at path; ok and changed are what
		// Version then reports.
		change      func(t *testing.T, path string)
		ok, changed bool
	}{
		{"untouched", func(*testing.T, string) {}, true, false},
		{"appended to", func(t *testing.T, path string) {
			appendTo(t, path, `{"type":"user/message","seq":3,"time":1786000000001,"surfaceOp":"append","data":{"role":"user","id":"m3","source":{"kind":"user"},"content":[{"type":"text","text":"more"}]}}`+"\n")
			setMtime(t, path, old.Add(time.Minute))
		}, true, true},
		{"truncated", func(t *testing.T, path string) {
			if err := os.Truncate(path, int64(last)); err != nil {
				t.Fatal(err)
			}
			setMtime(t, path, old.Add(time.Minute))
		}, true, true},
		{"replaced", func(t *testing.T, path string) {
			tmp := path + ".new"
			if err := os.WriteFile(tmp, log, 0o644); err != nil {
				t.Fatal(err)
			}
			setMtime(t, tmp, old)
			if err := os.Rename(tmp, path); err != nil {
				t.Fatal(err)
			}
		}, true, true},
		{"rewritten in place within the same second", func(t *testing.T, path string) {
			rewriteTail(t, path, log)
			setMtime(t, path, old.Add(400*time.Millisecond))
		}, true, true},
		{"rewritten in place at the same time", func(t *testing.T, path string) {
			rewriteTail(t, path, log)
			setMtime(t, path, old)
		}, false, false},
		{"modified moments ago", func(t *testing.T, path string) {
			appendTo(t, path, "")
			// Ahead of the clock, so a stalled machine cannot let the
			// settle time pass before Version looks.
			setMtime(t, path, time.Now().Add(10*time.Second))
		}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			path := writeSession(t, root, &cwd, id, log)
			setMtime(t, path, old)
			x, err := sessionstore.OpenIndexed(root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache})
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			ctx := context.Background()
			if err := x.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			if v, ok := x.Version(ctx, "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0fff"); ok {
				t.Fatalf("unknown session has version %q", v)
			}
			before, ok := x.Version(ctx, id)
			if !ok {
				t.Fatal("indexed session has no version")
			}
			tc.change(t, path)
			after, ok := x.Version(ctx, id)
			if ok != tc.ok || ok && (after != before) != tc.changed {
				t.Fatalf("version %q, %t after the change; before %q: want ok %t, changed %t", after, ok, before, tc.ok, tc.changed)
			}
		})
	}
}

func appendTo(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// rewriteTail changes the last message's text in place, within the bytes
// the tail check covers, keeping the size.
func rewriteTail(t *testing.T, path string, log []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte("HELLO"), int64(bytes.LastIndex(log, []byte("hello")))); err != nil {
		t.Fatal(err)
	}
}

func setMtime(t *testing.T, path string, mtime time.Time) {
	t.Helper()
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

// TestListedCandidates: each listed id's candidate, in the order asked,
// labelled with its latest title else its id, with its listing header;
// unknown and unlisted ids are left out; a title written since shows once
// a query has revalidated the index.
func TestListedCandidates(t *testing.T) {
	const (
		titled   = "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0c01"
		untitled = "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0c02"
		headless = "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0c03"
		unknown  = "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0cff"
	)
	cwd := "/home/alice/listed"
	root := t.TempDir()
	header := func(id string, createdAt int) string {
		return fmt.Sprintf(`{"type":"session","version":0,"id":%q,"createdAt":%d,"cwd":%q,"delegationDepth":0}`+"\n", id, createdAt, cwd)
	}
	title := func(seq int, text string) string {
		return fmt.Sprintf(`{"type":"session/title","seq":%d,"time":1786000000002,"data":{"title":%q,"messageSeqs":[0],"source":{"kind":"provider","provider":"p","model":{"provider":"p","model":"m"}}}}`+"\n", seq, text)
	}
	msg := `{"type":"user/message","seq":0,"time":1786000000001,"surfaceOp":"append","data":{"role":"user","id":"m0","source":{"kind":"user"},"content":[{"type":"text","text":"hello"}]}}` + "\n"
	path := writeSession(t, root, &cwd, titled, []byte(header(titled, 1786000000000)+msg+title(1, "First title")))
	writeSession(t, root, &cwd, untitled, []byte(header(untitled, 1786000000500)+msg))
	writeSession(t, root, &cwd, headless, []byte{})
	x := sessionstore.OpenWaited(t, root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache})
	ctx := context.Background()
	got := x.ListedCandidates([]string{untitled, unknown, headless, titled, "not an id/"})
	want := []reference.Candidate{
		{SessionID: untitled, Label: untitled, CWD: &cwd, CreatedAt: 1786000000500},
		{SessionID: titled, Label: "First title", CWD: &cwd, CreatedAt: 1786000000000},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ListedCandidates = %+v, want %+v", got, want)
	}
	appendTo(t, path, title(2, "Second title"))
	// A query revalidates once the write is noticed (a notification).
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		trs, err := x.ReadTitles(ctx, []string{titled})
		if err != nil {
			t.Fatal(err)
		}
		if trs[0].Title != nil && *trs[0].Title == "Second title" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no query saw the new title: %+v", trs)
		}
	}
	if got := x.ListedCandidates([]string{titled}); len(got) != 1 || got[0].Label != "Second title" {
		t.Fatalf("after the new title was read: %+v", got)
	}
}

// TestLookupOfASessionInAnotherSegmentsDirectory: a session whose header
// passes the identity check only through a symlinked path (its directory
// is not named by its id's segment) is found by its id like any other:
// listed, labelled, read and known to the catalog; the directory's own
// name is no id.
func TestLookupOfASessionInAnotherSegmentsDirectory(t *testing.T) {
	if runtime.GOOS == "windows" {
		// A directory symlink is a reparse point there, which a session
		// scan does not list and the identity check does not resolve alike.
		t.Skip("directory symlinks as on Unix")
	}
	const (
		id    = "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0d01"
		other = "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0d02"
	)
	cwdA, cwdB := "/home/alice/a", "/home/alice/b"
	root := t.TempDir()
	data := fmt.Sprintf(`{"type":"session","version":0,"id":%q,"createdAt":1786000000000,"cwd":%q,"delegationDepth":0}`+"\n", id, cwdA) +
		`{"type":"user/message","seq":0,"time":1786000000001,"surfaceOp":"append","data":{"role":"user","id":"m0","source":{"kind":"user"},"content":[{"type":"text","text":"hello"}]}}` + "\n" +
		`{"type":"session/title","seq":1,"time":1786000000002,"data":{"title":"Elsewhere","messageSeqs":[0],"source":{"kind":"provider","provider":"p","model":{"provider":"p","model":"m"}}}}` + "\n"
	// The transcript lies in project B under another session's segment; its
	// own path (project A, its id's segment) is a symlink to that directory.
	path := writeSession(t, root, &cwdB, other, []byte(data))
	want, err := sessionstore.SessionPath(root, &cwdA, id, sessionstore.Raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Dir(want)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(path), filepath.Dir(want)); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	x := sessionstore.OpenWaited(t, root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache})
	ctx := context.Background()
	if got := x.ListedCandidates([]string{id, other}); len(got) != 1 || got[0].SessionID != id || got[0].Label != "Elsewhere" || *got[0].CWD != cwdA {
		t.Fatalf("ListedCandidates = %+v, want only %s labelled Elsewhere in %s", got, id, cwdA)
	}
	trs, err := x.ReadTitles(ctx, []string{id})
	if err != nil || trs[0].Err != nil || trs[0].Title == nil || *trs[0].Title != "Elsewhere" {
		t.Fatalf("ReadTitles = %+v, %v; want the title Elsewhere", trs, err)
	}
	cat, err := x.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !cat.Known(id) || cat.Known(other) {
		t.Fatalf("catalog knows %s: %v, %s: %v; want only the first", id, cat.Known(id), other, cat.Known(other))
	}
}
