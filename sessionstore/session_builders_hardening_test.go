package sessionstore_test

// Session builders shared by the hardening tests (all platforms).

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// hdrLine is a session header line with cwd /p.
func hdrLine(id string) string {
	return `{"type":"session","version":0,"id":` + jsjson.Quote(id) + `,"createdAt":1786003000000,"cwd":"/p","delegationDepth":0}` + "\n"
}

// eventLines are seq 0..3 of a session: a turn with a user message and a
// title.
func eventLines(id, text string) string {
	return `{"type":"turn/start","seq":0,"time":1786003000001,"data":{"turn":1}}` + "\n" +
		`{"type":"step/start","seq":1,"time":1786003000002,"data":{"turn":1,"step":1}}` + "\n" +
		`{"type":"user/message","seq":2,"time":1786003000003,"data":{"content":[{"type":"text","text":` + jsjson.Quote(text) + `}],"source":{"kind":"user"},"role":"user","id":"a7000000-0000-4000-8000-000000000001"},"surfaceOp":"append"}` + "\n" +
		`{"type":"session/title","seq":3,"time":1786003000004,"data":{"title":` + jsjson.Quote(text) + `,"messageSeqs":[2],"source":{"kind":"user"}}}` + "\n"
}

// writeRawSession writes id's raw transcript (header and eventLines) under
// root and returns its path.
func writeRawSession(t *testing.T, root, id, text string) string {
	t.Helper()
	path, err := sessionstore.SessionPath(root, hostileStr("/p"), id, sessionstore.Raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(hdrLine(id)+eventLines(id, text)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
