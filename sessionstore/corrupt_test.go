package sessionstore_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/dsh-lsp/dsh-lsp/internal/golden"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript/transcripttest"
)

// writeSession writes a raw transcript at the path dsh would use.
func writeSession(t *testing.T, root string, cwd *string, id string, data []byte) string {
	t.Helper()
	path, err := sessionstore.SessionPath(root, cwd, id, sessionstore.Raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if data != nil {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func buildLog(t *testing.T, id string, createdAt int64, events ...string) []byte {
	t.Helper()
	s := golden.Session{ID: id, CreatedAt: createdAt}
	for _, e := range events {
		s.Events = append(s.Events, []byte(e))
	}
	log, err := golden.BuildLog(s)
	if err != nil {
		t.Fatal(err)
	}
	return log
}

func header(id string) string {
	return `{"type":"session","version":0,"id":"` + id + `","createdAt":1,"delegationDepth":0}` + "\n"
}

func isRoot() bool { return os.Geteuid() == 0 }

// TestCorruptSessionsAreIsolated writes one store holding a good session
// and one broken session per failure mode: each broken session fails with
// dsh's error class for that session only, while listing, titles and the
// good session keep working.
func TestCorruptSessionsAreIsolated(t *testing.T) {
	root := t.TempDir()
	writeSession(t, root, nil, "good", buildLog(t, "good", 100, `{"user":"hello"}`, `{"title":"Good title"}`))
	junk := make([]byte, 4096)
	rand.New(rand.NewSource(7)).Read(junk)
	junk[100] = '\n'
	type brokenCase struct {
		id     string
		data   []byte
		kind   sessionstore.Kind
		listed bool // dsh lists it (header fine), reading fails
		setup  func(t *testing.T, path string)
		skip   func() string
	}
	turnEnd := func(seq string) string {
		return `{"type":"turn/end","seq":` + seq + `,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}` + "\n"
	}
	cases := []brokenCase{
		{id: "bad-header", data: []byte("{not json\n"), kind: sessionstore.KindCorrupt},
		{id: "no-depth-header", data: []byte(`{"type":"session","version":0,"id":"no-depth-header","createdAt":1}` + "\n"), kind: sessionstore.KindCorrupt},
		{id: "seq-gap", data: []byte(header("seq-gap") +
			`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}` + "\n" +
			`{"type":"turn/start","seq":5,"time":1,"data":{"turn":1}}` + "\n" + turnEnd("2")),
			kind: sessionstore.KindCorrupt, listed: true},
		{id: "unknown-type", data: []byte(header("unknown-type") + `{"type":"future/thing","seq":0,"time":1,"data":{}}` + "\n"),
			kind: sessionstore.KindUnsupported, listed: true},
		{id: "foreign-version", data: []byte(`{"type":"session","version":1,"id":"foreign-version","createdAt":1,"delegationDepth":0}` + "\n"),
			kind: sessionstore.KindUnsupported, listed: true},
		{id: "bad-surface-op", data: buildLog(t, "bad-surface-op", 1, `{"user":"x"}`,
			`{"type":"user/message","data":{"content":[],"source":{"kind":"user"},"role":"user","id":"m"},"surfaceOp":{"op":"replace","start":0,"end":7}}`),
			kind: sessionstore.KindCorrupt, listed: true},
		{id: "surface-op-on-log-only", data: buildLog(t, "surface-op-on-log-only", 1, `{"type":"todo/write","data":{"todos":[]},"surfaceOp":"append"}`),
			kind: sessionstore.KindCorrupt, listed: true},
		{id: "extra-envelope-key", data: []byte(header("extra-envelope-key") + `{"type":"todo/write","seq":0,"time":1,"data":{},"parent":3}` + "\n"),
			kind: sessionstore.KindCorrupt, listed: true},
		{id: "numeric-type", data: []byte(header("numeric-type") + `{"type":5,"seq":0,"time":1,"data":{}}` + "\n"),
			kind: sessionstore.KindUnsupported, listed: true},
		{id: "binary-junk", data: junk, kind: sessionstore.KindCorrupt},
		{id: "empty-file", data: []byte{}, kind: sessionstore.KindCorrupt},
		{id: "wrong-dir", data: []byte(header("someone-else")), kind: sessionstore.KindCorrupt},
		{id: "unreadable", data: []byte(header("unreadable")), kind: sessionstore.KindIO,
			setup: func(t *testing.T, path string) {
				if err := os.Chmod(path, 0); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.Chmod(path, 0o644) })
			},
			skip: func() string {
				if runtime.GOOS == "windows" {
					return "Windows has no Unix permissions: chmod 000 leaves the file readable"
				}
				if isRoot() {
					return "running as root: chmod 000 stays readable"
				}
				return ""
			}},
		{id: "transcript-is-a-directory", kind: sessionstore.KindIO, setup: func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{id: "symlink-loop", kind: sessionstore.KindIO, setup: func(t *testing.T, path string) {
			if err := os.Symlink(filepath.Base(path), path); err != nil {
				t.Fatal(err)
			}
		}, skip: func() string {
			if runtime.GOOS == "windows" {
				return "creating symlinks needs a privilege on Windows"
			}
			return ""
		}},
	}
	var active []brokenCase
	for _, c := range cases {
		if c.skip != nil && c.skip() != "" {
			t.Logf("%s: skipped: %s", c.id, c.skip())
			continue
		}
		path := writeSession(t, root, nil, c.id, c.data)
		if c.setup != nil {
			c.setup(t, path)
		}
		active = append(active, c)
	}
	st, err := sessionstore.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	listing, err := st.Discover(ctx)
	if err != nil {
		t.Fatalf("listing failed for the whole store: %v", err)
	}
	listed := map[string]bool{}
	for _, h := range listing.Headers {
		listed[h.ID] = true
	}
	if !listed["good"] {
		t.Fatalf("good session not listed: %v", listing.Headers)
	}
	var ids []string
	for _, c := range active {
		t.Run(c.id, func(t *testing.T) {
			if listed[c.id] != c.listed {
				t.Errorf("listed = %v, want %v", listed[c.id], c.listed)
			}
			_, err := st.ReadSurface(ctx, c.id)
			if err == nil {
				t.Fatal("ReadSurface succeeded")
			}
			if got := sessionstore.KindOf(err); got != c.kind {
				t.Errorf("error class %v, want %v (%v)", got, c.kind, err)
			}
			if !strings.Contains(err.Error(), c.id) {
				t.Errorf("error %q does not name the session", err)
			}
		})
		ids = append(ids, c.id)
	}
	titles, err := st.ReadTitles(ctx, append([]string{"good"}, ids...))
	if err != nil {
		t.Fatal(err)
	}
	if titles[0].Err != nil || titles[0].Title == nil || *titles[0].Title != "Good title" {
		t.Errorf("good title %+v", titles[0])
	}
	for _, r := range titles[1:] {
		if r.Err == nil {
			t.Errorf("title read of %s succeeded", r.SessionID)
		}
	}
	if s, err := st.ReadSurface(ctx, "good"); err != nil || len(s.Events) != 1 {
		t.Errorf("good session surface %v, %v", s, err)
	}
	if _, err := st.ReadSurface(ctx, "missing"); !errors.Is(err, sessionstore.ErrNotFound) || err.Error() != `session "missing" not found` {
		t.Errorf("missing session error %v", err)
	}
	if _, err := st.ReadSurface(ctx, "quote\"d"); err == nil || err.Error() != `session "quote\"d" not found` {
		t.Errorf("missing quoted id error %v", err)
	}
	// A lone surrogate (WTF-8, see package reference) is quoted as JS does.
	if _, err := st.ReadSurface(ctx, "x\xed\xa0\x80<\n"); err == nil || err.Error() != `session "x\ud800<\n" not found` {
		t.Errorf("missing lone-surrogate id error %v", err)
	}
}

// TestTornTailIsNotCorruption: a bad record after the last turn/end is an
// interrupted write (dropped); the same damage before a turn/end is fatal.
func TestTornTailIsNotCorruption(t *testing.T) {
	good := `{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}` + "\n"
	cases := []struct {
		name       string
		tail       string
		wantEvents int
		wantErr    bool
	}{
		{"partial line", `{"type":"turn/end","seq":1,"ti`, 1, false},
		{"garbage line then nothing", "\x00\x01garbage\n", 1, false},
		{"seq gap then non-turn-end", `{"type":"step/start","seq":9,"time":1,"data":{"turn":1,"step":1}}` + "\n", 1, false},
		{"garbage then turn/end", "garbage\n" + `{"type":"turn/end","seq":2,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}` + "\n", 0, true},
		{"wrong-seq turn/end itself", `{"type":"turn/end","seq":4,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}` + "\n", 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			scan, err := transcripttest.ScanRaw([]byte(header("s") + good + c.tail))
			if c.wantErr {
				if err == nil {
					t.Fatalf("no error; events %d", len(scan.Events))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(scan.Events) != c.wantEvents || scan.TornBytes != int64(len(c.tail)) {
				t.Errorf("events %d torn %d, want %d and %d", len(scan.Events), scan.TornBytes, c.wantEvents, len(c.tail))
			}
		})
	}
}

// zstdFrames encodes each text as one independent frame (checksum on).
func zstdFrames(t *testing.T, withSize bool, texts ...string) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(true), zstd.WithSingleSegment(withSize))
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for _, s := range texts {
		if withSize {
			out = enc.EncodeAll([]byte(s), out)
			continue
		}
		var b bytes.Buffer
		w, _ := zstd.NewWriter(&b, zstd.WithEncoderCRC(true), zstd.WithSingleSegment(false), zstd.WithZeroFrames(true))
		w.Write([]byte(s))
		w.Close()
		out = append(out, b.Bytes()...)
	}
	return out
}

func TestZstdStoreCorruption(t *testing.T) {
	root := t.TempDir()
	put := func(id string, data []byte) string {
		path, _ := sessionstore.SessionPath(root, nil, id, sessionstore.Zstd)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	ev := func(seq string) string {
		return `{"type":"user/message","seq":` + seq + `,"time":1,"data":{"content":[{"type":"text","text":"m` + seq + `"}],"source":{"kind":"user"},"role":"user","id":"m` + seq + `"},"surfaceOp":"append"}` + "\n"
	}
	whole := zstdFrames(t, true, header("torn"), ev("0"), ev("1"))
	lastStart := len(zstdFrames(t, true, header("torn"), ev("0")))
	put("good-sized", zstdFrames(t, true, header("good-sized"), ev("0")+ev("1"), ev("2")))
	put("good-unsized", zstdFrames(t, false, header("good-unsized"), ev("0")+ev("1"), ev("2")))
	put("torn", whole[:lastStart+(len(whole)-lastStart)/2])
	put("garbage", []byte("this is not zstd at all\n"))
	bad := zstdFrames(t, true, header("bad-checksum"), ev("0"))
	bad[len(bad)-1] ^= 0xff
	put("bad-checksum", bad)
	put("torn-record-in-frame", zstdFrames(t, true, header("torn-record-in-frame"), ev("0")+`{"type":"turn/end"`))
	put("two-lines-in-header-frame", zstdFrames(t, true, header("two-lines-in-header-frame")+ev("0")))

	st, _ := sessionstore.Open(root)
	ctx := context.Background()
	listing, err := st.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for id, path := range listing.Paths {
		if filepath.Base(path) != sessionstore.Zstd.FileName() {
			t.Errorf("session %q read from %s", id, path)
		}
	}
	want := map[string]struct {
		events int
		kind   sessionstore.Kind
	}{
		"good-sized":                {3, 0},
		"good-unsized":              {3, 0},
		"torn":                      {1, 0},
		"garbage":                   {0, sessionstore.KindCorrupt},
		"bad-checksum":              {0, sessionstore.KindCorrupt},
		"torn-record-in-frame":      {0, sessionstore.KindCorrupt},
		"two-lines-in-header-frame": {0, sessionstore.KindCorrupt},
	}
	for id, w := range want {
		t.Run(id, func(t *testing.T) {
			s, err := st.ReadSurface(ctx, id)
			if w.kind != 0 {
				if got := sessionstore.KindOf(err); got != w.kind {
					t.Fatalf("error class %v (%v), want %v", got, err, w.kind)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Events) != w.events {
				t.Errorf("%d surface events, want %d", len(s.Events), w.events)
			}
		})
	}
	listed := map[string]bool{}
	for _, h := range listing.Headers {
		listed[h.ID] = true
	}
	for _, id := range []string{"good-sized", "good-unsized", "torn", "torn-record-in-frame"} {
		if !listed[id] {
			t.Errorf("%s not listed", id)
		}
	}
	for _, id := range []string{"garbage", "two-lines-in-header-frame"} {
		if listed[id] {
			t.Errorf("%s listed despite an unreadable header frame", id)
		}
	}
}
