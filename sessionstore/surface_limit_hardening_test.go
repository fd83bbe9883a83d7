package sessionstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// TestSurfaceOverReadLimit: a session whose messages (each well under the
// limit) add up to more than the read limit fails its surface read with
// ErrReadLimit, while its title
// and the other sessions read as usual.
func TestSurfaceOverReadLimit(t *testing.T) {
	const limit = 16 << 20
	root := filepath.Join(t.TempDir(), "sessions")
	big := "many-messages"
	var b strings.Builder
	b.WriteString(`{"type":"session","version":0,"id":"` + big + `","createdAt":1786003000000,"cwd":"/p","delegationDepth":0}` + "\n")
	b.WriteString(`{"type":"turn/start","seq":0,"time":1786003000001,"data":{"turn":1}}` + "\n")
	b.WriteString(`{"type":"step/start","seq":1,"time":1786003000002,"data":{"turn":1,"step":1}}` + "\n")
	text := strings.Repeat("m", 1<<20)
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&b, `{"type":"user/message","seq":%d,"time":1786003000003,"data":{"content":[{"type":"text","text":"%s"}],"source":{"kind":"user"},"role":"user","id":"a7000000-0000-4000-8000-%012d"},"surfaceOp":"append"}`+"\n", 2+i, text, i)
	}
	fmt.Fprintf(&b, `{"type":"session/title","seq":22,"time":1786003000004,"data":{"title":"big","messageSeqs":[2],"source":{"kind":"user"}}}`+"\n")
	path, err := sessionstore.SessionPath(root, hostileStr("/p"), big, sessionstore.Raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	writeRawSession(t, root, "good", "good session")

	x, err := sessionstore.OpenIndexed(root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache, NoWatch: true, ReadLimit: limit})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	ctx := context.Background()
	x.Wait(ctx)
	for name, src := range map[string]reference.Source{"index": x} {
		if _, err := src.ReadSurface(ctx, big); !errors.Is(err, sessionstore.ErrReadLimit) || !strings.Contains(err.Error(), "surface") {
			t.Errorf("%s: surface of %s: %v, want the read limit", name, big, err)
		}
		if s, err := src.ReadSurface(ctx, "good"); err != nil || len(s.Events) == 0 {
			t.Errorf("%s: good session: %v", name, err)
		}
		r, err := src.ReadTitles(ctx, []string{big, "good"})
		if err != nil || len(r) != 2 || r[0].Err != nil || r[0].Title == nil || *r[0].Title != "big" || r[1].Title == nil {
			t.Errorf("%s: titles: %+v, %v", name, r, err)
		}
	}
	// With the limit above the surface it reads.
	x2, err := sessionstore.OpenIndexed(root, sessionstore.IndexOptions{Lazy: true, ReadLimit: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer x2.Close()
	if s, err := x2.ReadSurface(ctx, big); err != nil || len(s.Events) != 20 {
		t.Errorf("64 MiB limit: %v", err)
	}
}
