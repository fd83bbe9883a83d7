package sessionstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

func ids(l *sessionstore.Listing) string {
	var s []string
	for _, h := range l.Headers {
		s = append(s, h.ID)
	}
	return strings.Join(s, ",")
}

// TestDiscoverySkipsBadSessions: the situations where dsh fails the whole
// listing (spec Q6) only drop the session concerned, and are reported.
func TestDiscoverySkipsBadSessions(t *testing.T) {
	root := t.TempDir()
	a, b := "/a", "/b"
	hdr := func(id string, cwd *string, extra string) []byte {
		c := ""
		if cwd != nil {
			c = `,"cwd":"` + *cwd + `"`
		}
		return []byte(`{"type":"session","version":0,"id":"` + id + `","createdAt":1` + c + `,"delegationDepth":0` + extra + "}\n")
	}
	writeSession(t, root, &a, "ok", hdr("ok", &a, ""))
	writeSession(t, root, &a, "dup", hdr("dup", &a, ""))
	writeSession(t, root, &b, "dup", hdr("dup", &b, ""))
	writeSession(t, root, &a, "moved", hdr("moved", &b, "")) // header names another cwd
	writeSession(t, root, &a, "retired", hdr("retired", &a, `,"sandboxMode":"x"`))
	writeSession(t, root, &a, "half-header", []byte(`{"type":"session","version":0,"id":"half`)) // being created
	writeSession(t, root, &a, "no-transcript", nil)
	os.WriteFile(filepath.Join(root, "--a--", "old.jsonl"), []byte("{}\n"), 0o644)                 // obsolete flat layout
	os.WriteFile(filepath.Join(root, "--a--", "ok", "session.jsonl.abcdef012345.tmp"), nil, 0o644) // temp file: ignored
	os.WriteFile(filepath.Join(root, "stray-file"), nil, 0o644)                                    // root-level file: ignored

	st, _ := sessionstore.Open(root)
	l, err := st.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(l); got != "dup,ok" {
		t.Errorf("listed %s, want dup,ok", got)
	}
	var problems []string
	for _, p := range l.Problems {
		problems = append(problems, p.Error())
	}
	sort.Strings(problems)
	joined := strings.Join(problems, "\n")
	for _, want := range []string{"duplicate JSONL session id", "belongs at", "retired field sandboxMode", "obsolete flat session file"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no problem mentioning %q in:\n%s", want, joined)
		}
	}
	if len(problems) != 4 {
		t.Errorf("%d problems, want 4:\n%s", len(problems), joined)
	}
	if _, err := st.ReadSurface(context.Background(), "dup"); sessionstore.KindOf(err) != sessionstore.KindIO {
		t.Errorf("ReadSurface of a duplicated id: %v", err)
	}
	if _, err := st.ReadSurface(context.Background(), "ok"); err != nil {
		t.Errorf("ReadSurface(ok): %v", err)
	}
	// A missing root lists nothing.
	empty, _ := sessionstore.Open(filepath.Join(root, "does-not-exist"))
	if hs, err := empty.ListSessions(context.Background()); err != nil || len(hs) != 0 {
		t.Errorf("missing root: %v, %v", hs, err)
	}
}

// TestMixedEncodings: unpinned, every session directory is read by its
// own suffix, so one zstd log among raw ones (a user who switched dsh's
// compression) hides nothing; a directory holding both transcripts reads
// session.jsonl.zstd and reports the other. Pinned (dsh's compression
// setting), only that suffix is read and the others are reported. The
// store's listing, its lookup by id and the index agree.
func TestMixedEncodings(t *testing.T) {
	root := t.TempDir()
	var rawIDs []string
	for i := range 7 {
		id := fmt.Sprintf("raw%d", i)
		writeSession(t, root, nil, id, []byte(header(id)))
		rawIDs = append(rawIDs, id)
	}
	zpath, _ := sessionstore.SessionPath(root, nil, "zst", sessionstore.Zstd)
	os.MkdirAll(filepath.Dir(zpath), 0o755)
	os.WriteFile(zpath, zstdFrames(t, true, header("zst")), 0o644)
	all := strings.Join(append(slices.Clone(rawIDs), "zst"), ",")

	cases := []struct {
		name     string
		pinned   sessionstore.Encoding
		both     bool // raw0's directory also holds a zstd transcript
		listed   string
		skipped  []string // path suffixes of the reported transcripts
		readFrom map[string]string
	}{
		{name: "unpinned", listed: all, readFrom: map[string]string{"raw0": "session.jsonl", "zst": "session.jsonl.zstd"}},
		{name: "pinned raw", pinned: sessionstore.Raw, listed: strings.Join(rawIDs, ","),
			skipped: []string{filepath.Join("zst", "session.jsonl.zstd")}},
		{name: "pinned zstd", pinned: sessionstore.Zstd, listed: "zst", skipped: func() []string {
			var out []string
			for _, id := range rawIDs {
				out = append(out, filepath.Join(id, "session.jsonl"))
			}
			return out
		}()},
		{name: "unpinned, both in one directory", both: true, listed: all,
			skipped: []string{filepath.Join("raw0", "session.jsonl")}, readFrom: map[string]string{"raw0": "session.jsonl.zstd"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			both, _ := sessionstore.SessionPath(root, nil, "raw0", sessionstore.Zstd)
			if c.both {
				os.WriteFile(both, zstdFrames(t, true, header("raw0")), 0o644)
				defer os.Remove(both)
			}
			st, err := sessionstore.OpenWith(root, sessionstore.Options{Encoding: c.pinned})
			if err != nil {
				t.Fatal(err)
			}
			l, err := st.Discover(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got := sortedIDs(l.Headers); got != c.listed {
				t.Errorf("store lists %s, want %s", got, c.listed)
			}
			checkSkipped(t, "store", l.Problems, c.skipped)
			for id, file := range c.readFrom {
				if filepath.Base(l.Paths[id]) != file {
					t.Errorf("store reads %s from %s, want its %s", id, l.Paths[id], file)
				}
			}
			x := sessionstore.OpenWaited(t, root, sessionstore.IndexOptions{Encoding: c.pinned, CacheDir: sessionstore.NoCache})
			defer x.Close()
			hs, err := x.ListSessions(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got := sortedIDs(hs); got != c.listed {
				t.Errorf("index lists %s, want %s", got, c.listed)
			}
			checkSkipped(t, "index", x.Skipped(), c.skipped)
			for _, id := range strings.Split(c.listed, ",") {
				if _, err := x.ReadSurface(context.Background(), id); err != nil {
					t.Errorf("index ReadSurface(%s): %v", id, err)
				}
				if _, err := st.ReadSurface(context.Background(), id); err != nil {
					t.Errorf("store ReadSurface(%s): %v", id, err)
				}
			}
		})
	}
}

func sortedIDs(hs []reference.SessionHeader) string {
	var out []string
	for _, h := range hs {
		out = append(out, h.ID)
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

// checkSkipped checks that problems report exactly the transcripts whose
// paths end in want, each saying it was skipped.
func checkSkipped(t *testing.T, who string, problems []error, want []string) {
	t.Helper()
	if len(problems) != len(want) {
		t.Errorf("%s reports %d skipped transcripts, want %d: %v", who, len(problems), len(want), problems)
		return
	}
	for _, w := range want {
		found := false
		for _, p := range problems {
			found = found || (strings.Contains(p.Error(), w+":") && strings.Contains(p.Error(), "skipped"))
		}
		if !found {
			t.Errorf("%s does not report %s as skipped: %v", who, w, problems)
		}
	}
}

// TestLoneSurrogateID: an id holding an escaped lone surrogate keeps it
// (as WTF-8, like package reference and JS JSON.parse), so its path is
// encodeSegment's ~D800 and readSurface writes it back as \ud800.
func TestLoneSurrogateID(t *testing.T) {
	root := t.TempDir()
	id := "x\xed\xa0\x80\U0001F600"
	data := []byte(`{"type":"session","version":0,"id":"x\ud800\ud83d\ude00","createdAt":1,"delegationDepth":0}` + "\n")
	path := writeSession(t, root, nil, id, data)
	if filepath.Base(filepath.Dir(path)) != "x~D800~D83D~DE00" {
		t.Fatalf("path %s", path)
	}
	st, _ := sessionstore.Open(root)
	l, err := st.Discover(context.Background())
	if err != nil || len(l.Headers) != 1 || l.Headers[0].ID != id || len(l.Problems) != 0 {
		t.Fatalf("listing %+v, %v", l, err)
	}
	s, err := st.ReadSurface(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(s.Session); got != `{"version":0,"id":"x\ud800😀","createdAt":1,"delegationDepth":0}` {
		t.Errorf("session object %s", got)
	}
}
