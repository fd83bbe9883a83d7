package sessionstore

import (
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/storepath"
)

// TestPathVectors checks encodeSegment and projectKey against the vectors
// computed by HEAD dsh (retention-and-path-vectors.json) plus spec §1.2.
func TestPathVectors(t *testing.T) {
	var v struct {
		IDVectors []struct {
			ID            string `json:"id"`
			EncodeSegment string `json:"encodeSegment"`
		} `json:"idVectors"`
		CwdVectors []struct {
			CWD        string `json:"cwd"`
			ProjectKey string `json:"projectKey"`
		} `json:"cwdVectors"`
	}
	readJSON(t, filepath.Join(testdata(t), "fixtures", "expected", "retention-and-path-vectors.json"), &v)
	if len(v.IDVectors) == 0 || len(v.CwdVectors) == 0 {
		t.Fatal("no vectors")
	}
	for _, c := range v.IDVectors {
		got, err := storepath.EncodeSegment(c.ID)
		if err != nil || got != c.EncodeSegment {
			t.Errorf("storepath.EncodeSegment(%q) = %q, %v; want %q", c.ID, got, err, c.EncodeSegment)
		}
		back, ok := DecodeSegment(got)
		if !ok || back != c.ID {
			t.Errorf("DecodeSegment(%q) = %q, %v; want %q", got, back, ok, c.ID)
		}
	}
	for _, c := range v.CwdVectors {
		if got, err := storepath.ProjectKey(c.CWD); err != nil || got != c.ProjectKey {
			t.Errorf("storepath.ProjectKey(%q) = %q, %v; want %q", c.CWD, got, err, c.ProjectKey)
		}
	}
	extra := []struct{ id, seg string }{
		{"abc-123", "abc-123"},
		{"x\xed\xa0\x80y", "x~D800y"}, // WTF-8 lone surrogate
		{"~", "~007E"},
		{"...", "..."},
	}
	for _, c := range extra {
		if got, _ := storepath.EncodeSegment(c.id); got != c.seg {
			t.Errorf("storepath.EncodeSegment(%q) = %q, want %q", c.id, got, c.seg)
		}
		if back, ok := DecodeSegment(c.seg); !ok || back != c.id {
			t.Errorf("DecodeSegment(%q) = %q, %v", c.seg, back, ok)
		}
	}
	for _, bad := range []string{"", "a~00e9", "a/b", "~12", "a~0061"} {
		if _, ok := DecodeSegment(bad); ok {
			t.Errorf("DecodeSegment(%q) accepted a non-canonical segment", bad)
		}
	}
	if _, err := storepath.EncodeSegment(""); err == nil {
		t.Error("storepath.EncodeSegment(\"\") accepted the empty id")
	}
	if _, err := storepath.ProjectKey(""); err == nil {
		t.Error("storepath.ProjectKey(\"\") accepted the empty cwd")
	}
	long := "/" + repeat("a", 300)
	if got, _ := storepath.ProjectKey(long); len(got) != 251+4 {
		t.Errorf("ProjectKey of a 300-char cwd has length %d, want 255", len(got))
	}
	cwd := "/home/alice/proj"
	// Joined with the host's separator (TestSessionPathPerOS).
	if p, _ := SessionPath("/r", &cwd, "a/b", Zstd); p != filepath.FromSlash("/r/--home-alice-proj--/a~002Fb/session.jsonl.zstd") {
		t.Errorf("SessionPath = %s", p)
	}
	if p, _ := SessionPath("/r", nil, "x", Raw); p != filepath.FromSlash("/r/_no-cwd/x/session.jsonl") {
		t.Errorf("SessionPath = %s", p)
	}
}

func repeat(s string, n int) string {
	b := make([]byte, 0, len(s)*n)
	for i := 0; i < n; i++ {
		b = append(b, s...)
	}
	return string(b)
}

// TestListOrderTieBreak checks the conformance §6 tie-break order (ICU root
// collation of ids with equal createdAt), from shuffled input.
func TestListOrderTieBreak(t *testing.T) {
	want := []string{"_x", "-x", "~", "10", "9", "a", "A", "ä", "a10", "a9", "b", "B", "e", "é", "f", "z", "Z", "あ", "中"}
	r := rand.New(rand.NewSource(1))
	for round := 0; round < 5; round++ {
		hs := make([]reference.SessionHeader, 0, len(want)+2)
		for _, id := range want {
			hs = append(hs, reference.SessionHeader{ID: id, CreatedAt: 5})
		}
		hs = append(hs, reference.SessionHeader{ID: "zz-newest", CreatedAt: 9}, reference.SessionHeader{ID: "0-oldest", CreatedAt: 1})
		r.Shuffle(len(hs), func(i, j int) { hs[i], hs[j] = hs[j], hs[i] })
		SortHeaders(hs)
		var got []string
		for _, h := range hs {
			got = append(got, h.ID)
		}
		full := append(append([]string{"zz-newest"}, want...), "0-oldest")
		if !reflect.DeepEqual(got, full) {
			t.Fatalf("order %q\nwant  %q", got, full)
		}
	}
}

func TestResolveRoot(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX paths; TestResolveRootPerOS has the Windows rows")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	cases := []struct {
		name, flag, dshHome, want string
		unset                     bool
	}{
		{"flag wins", "/x/store", "/dsh", "/x/store", false},
		{"flag tilde", "~/s", "", filepath.Join(home, "s"), false},
		{"DSH_HOME", "", "/dsh", "/dsh/sessions", false},
		{"DSH_HOME tilde", "", "~/h", filepath.Join(home, "h", "sessions"), false},
		{"blank DSH_HOME", "", "  \t", filepath.Join(home, ".dsh", "sessions"), false},
		{"unset DSH_HOME", "", "", filepath.Join(home, ".dsh", "sessions"), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.unset {
				t.Setenv("DSH_HOME", "")
				os.Unsetenv("DSH_HOME")
			} else {
				t.Setenv("DSH_HOME", c.dshHome)
			}
			got, err := ResolveRoot(c.flag)
			if err != nil || got != c.want {
				t.Errorf("ResolveRoot(%q) = %q, %v; want %q", c.flag, got, err, c.want)
			}
		})
	}
	wd, _ := os.Getwd()
	if got, _ := ResolveRoot("rel"); got != filepath.Join(wd, "rel") {
		t.Errorf("relative flag resolved to %q", got)
	}
}

// TestEncodeSegmentOfAPlainIDIsTheID: an id of segment units only is its
// own segment, returned without a copy (a lookup by id allocates nothing).
func TestEncodeSegmentOfAPlainIDIsTheID(t *testing.T) {
	const id = "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0abc"
	if allocs := testing.AllocsPerRun(100, func() {
		if seg, err := storepath.EncodeSegment(id); err != nil || seg != id {
			t.Fatalf("storepath.EncodeSegment(%q) = %q, %v", id, seg, err)
		}
	}); allocs != 0 {
		t.Errorf("EncodeSegment of a plain id allocated %v times, want 0", allocs)
	}
}

// TestRawNameIsAPrefixOfZstdName: statTranscripts names both transcripts
// with one string, which needs the raw name to be a prefix of the zstd one.
func TestRawNameIsAPrefixOfZstdName(t *testing.T) {
	if !strings.HasPrefix(Zstd.FileName(), Raw.FileName()) {
		t.Fatalf("%q is not a prefix of %q", Raw.FileName(), Zstd.FileName())
	}
}

// TestTranscriptPathsAreTheJoin: the one-allocation transcript paths of a
// listed session directory are filepath.Join's, whatever form the root was
// given in.
func TestTranscriptPathsAreTheJoin(t *testing.T) {
	base := t.TempDir()
	sep := string(filepath.Separator)
	for _, root := range []string{base, base + sep, base + sep + ".", filepath.Join(base, "a") + sep + ".." + sep + "b", sep} {
		ix := &Indexed{root: root, rootPrefix: dirPrefix(root)}
		for _, ps := range [][2]string{{"--home-alice--", "0b6f8a4e-2d51"}, {"_no-cwd", "~002E"}} {
			raw, zstd := ix.transcriptPaths(ps[0], ps[1])
			if want := filepath.Join(root, ps[0], ps[1], Raw.FileName()); raw != want {
				t.Errorf("root %q: raw path %q, want %q", root, raw, want)
			}
			if want := filepath.Join(root, ps[0], ps[1], Zstd.FileName()); zstd != want {
				t.Errorf("root %q: zstd path %q, want %q", root, zstd, want)
			}
		}
	}
}

// TestLstatSigIsTheOpenFilesSig: the scan's signature of a transcript
// (lstatSig) equals the one a parse takes from the opened file (sigOf), or
// every scan would parse every session again.
func TestLstatSigIsTheOpenFilesSig(t *testing.T) {
	path := filepath.Join(t.TempDir(), Raw.FileName())
	if err := os.WriteFile(path, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := lstatSig(path); !ok || got != sigOf(fi) {
		t.Fatalf("lstatSig = %+v, %v; the open file's sigOf = %+v", got, ok, sigOf(fi))
	}
	if _, ok := lstatSig(path + ".missing"); ok {
		t.Fatal("lstatSig found a missing file")
	}
}
