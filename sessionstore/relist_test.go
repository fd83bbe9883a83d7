package sessionstore_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// TestWritesRelistInPlace: a write that leaves the listing as it was (a
// message or a title appended to a live session) swaps the session's entry
// without sorting the listing again; one that changes it (a new session)
// sorts it. Either way the index answers (listing, titles, versions,
// candidates) as one opened afresh on the store, and so does a restart on
// the cache it writes.
func TestWritesRelistInPlace(t *testing.T) {
	root := t.TempDir()
	ids := []string{"0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0a01", "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0a02", "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0a03"}
	cwds := []string{"/home/alice/one", "/home/alice/two", "/home/alice/one"}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	paths := make([]string, len(ids))
	for i, id := range ids {
		paths[i] = writeSession(t, root, &cwds[i], id, []byte(liveSessionLog(id, cwds[i], 1786000000000+int64(i)*1000, 2)))
		setMtime(t, paths[i], old)
	}
	cache := t.TempDir()
	open := func() *sessionstore.Indexed {
		return sessionstore.OpenWaited(t, root, sessionstore.IndexOptions{CacheDir: cache})
	}
	x := open()
	ctx := context.Background()
	sameAsFresh(t, x, root, ids)

	steps := []struct {
		name    string
		write   func(t *testing.T)
		inPlace bool
	}{
		{"a message appended", func(t *testing.T) {
			appendTo(t, paths[1], userMessage(2, "more"))
			setMtime(t, paths[1], old.Add(time.Minute))
		}, true},
		{"a title appended", func(t *testing.T) {
			appendTo(t, paths[0], `{"type":"session/title","seq":2,"time":1786000009000,"data":{"title":"Renamed","messageSeqs":[],"source":{"kind":"fallback"}}}`+"\n")
			setMtime(t, paths[0], old.Add(2*time.Minute))
		}, true},
		{"two sessions appended to", func(t *testing.T) {
			appendTo(t, paths[1], userMessage(3, "again"))
			setMtime(t, paths[1], old.Add(3*time.Minute))
			appendTo(t, paths[2], userMessage(2, "and here"))
			setMtime(t, paths[2], old.Add(3*time.Minute))
		}, true},
		{"a new session", func(t *testing.T) {
			id, cwd := "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0a04", "/home/alice/two"
			p := writeSession(t, root, &cwd, id, []byte(liveSessionLog(id, cwd, 1786000005000, 1)))
			setMtime(t, p, old.Add(4*time.Minute))
			ids = append(ids, id)
		}, false},
	}
	for _, st := range steps {
		if !st.inPlace {
			// What the writes in place left persists: a restart on the
			// cache answers as afresh too.
			x.Close()
			x = open()
			sameAsFresh(t, x, root, ids)
		}
		before := x.Listings()
		st.write(t)
		if err := x.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		sorted := x.Listings() > before
		if sorted == st.inPlace {
			t.Errorf("%s: listing sorted again %v, want %v", st.name, sorted, !st.inPlace)
		}
		sameAsFresh(t, x, root, ids)
	}
	if titles, err := x.ReadTitles(ctx, ids[:1]); err != nil || len(titles) != 1 || titles[0].Title == nil || *titles[0].Title != "Renamed" {
		t.Errorf("title after the write: %+v, %v; want Renamed", titles, err)
	}
}

// liveSessionLog is a session's header and n user messages.
func liveSessionLog(id, cwd string, createdAt int64, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"type":"session","version":0,"id":%q,"createdAt":%d,"cwd":%q,"delegationDepth":0}`+"\n", id, createdAt, cwd)
	for i := range n {
		b.WriteString(userMessage(i, fmt.Sprintf("hello %d", i)))
	}
	return b.String()
}

func userMessage(seq int, text string) string {
	return fmt.Sprintf(`{"type":"user/message","seq":%d,"time":1786000000001,"surfaceOp":"append","data":{"role":"user","id":"m%d","source":{"kind":"user"},"content":[{"type":"text","text":%q}]}}`+"\n", seq, seq, text)
}

// sameAsFresh checks that x answers about ids as an index opened afresh
// on root does.
func sameAsFresh(t *testing.T, x *sessionstore.Indexed, root string, ids []string) {
	t.Helper()
	fresh := sessionstore.OpenWaited(t, root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache, NoWatch: true})
	ctx := context.Background()
	for _, q := range []struct {
		name string
		of   func(ix *sessionstore.Indexed) (any, error)
	}{
		{"listing", func(ix *sessionstore.Indexed) (any, error) { return ix.ListSessions(ctx) }},
		{"titles", func(ix *sessionstore.Indexed) (any, error) { return ix.ReadTitles(ctx, ids) }},
		{"versions", func(ix *sessionstore.Indexed) (any, error) {
			var vs []string
			for _, id := range ids {
				v, _ := ix.Version(ctx, id)
				vs = append(vs, v)
			}
			return vs, nil
		}},
		{"session versions", func(ix *sessionstore.Indexed) (any, error) {
			seq, err := ix.SessionVersions(ctx)
			if err != nil {
				return nil, err
			}
			var vs []sessionstore.SessionVersion
			for v := range seq {
				vs = append(vs, v)
			}
			return vs, nil
		}},
		{"candidates", func(ix *sessionstore.Indexed) (any, error) {
			svc, err := reference.NewService(ix, reference.DefaultConfig())
			if err != nil {
				return nil, err
			}
			return svc.ListCandidates(ctx, reference.Target{}, "", 50)
		}},
	} {
		got, err := q.of(x)
		want, werr := q.of(fresh)
		if err != nil || werr != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v (%v), afresh %+v (%v)", q.name, got, err, want, werr)
		}
	}
}
