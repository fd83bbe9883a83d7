package sessionstore_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

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

// TestMixedEncodings: a root holds one encoding; transcripts in the other
// one are reported and ignored.
func TestMixedEncodings(t *testing.T) {
	root := t.TempDir()
	writeSession(t, root, nil, "raw", []byte(header("raw")))
	zpath, _ := sessionstore.SessionPath(root, nil, "zst", sessionstore.Zstd)
	os.MkdirAll(filepath.Dir(zpath), 0o755)
	os.WriteFile(zpath, zstdFrames(t, true, header("zst")), 0o644)

	auto, _ := sessionstore.Open(root)
	l, err := auto.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if l.Encoding != sessionstore.Zstd || ids(l) != "zst" || len(l.Problems) != 1 || !strings.Contains(l.Problems[0].Error(), filepath.Join("raw", "session.jsonl")+":") {
		t.Errorf("auto: encoding %v, listed %s, problems %v", l.Encoding, ids(l), l.Problems)
	}
	raw, _ := sessionstore.OpenEncoding(root, sessionstore.Raw)
	l, err = raw.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if ids(l) != "raw" || len(l.Problems) != 1 {
		t.Errorf("raw: listed %s, problems %v", ids(l), l.Problems)
	}
	// Both transcripts in one session directory.
	both, _ := sessionstore.SessionPath(root, nil, "raw", sessionstore.Zstd)
	os.WriteFile(both, zstdFrames(t, true, header("raw")), 0o644)
	l, _ = raw.Discover(context.Background())
	if ids(l) != "raw" || len(l.Problems) != 2 || !strings.Contains(l.Problems[0].Error(), filepath.Join("raw", "session.jsonl.zstd")) {
		t.Errorf("problems %v", l.Problems)
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
