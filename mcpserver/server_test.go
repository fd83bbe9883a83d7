package mcpserver_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-lsp/dsh-lsp/mcpserver"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// The fixture sessions the tests move around (see testdata/fixtures).
const (
	projG = "--home-bob-scratch--"
	idG   = "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0007"
)

// serve runs a server over root and connects a client whose
// notifications/resources/list_changed arrive on the returned channel.
func serve(t *testing.T, root string, protocolVersion string) (*mcp.ClientSession, <-chan struct{}) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	idx, err := sessionstore.OpenIndexed(root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache})
	if err != nil {
		t.Fatal(err)
	}
	cwd := "/home/alice/proj"
	srv, err := mcpserver.New(mcpserver.Options{Source: idx, Target: reference.Target{CWD: &cwd}, PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, st) }()
	changed := make(chan struct{}, 100)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			changed <- struct{}{}
		},
	})
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		<-done
		idx.Close()
	})
	return cs, changed
}

func resourceURIs(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range res.Resources {
		uris = append(uris, r.URI)
	}
	return uris
}

// waitListed waits (up to 30 s: the suite runs on 2 busy cores) until a
// list_changed notification has come and the resource list's membership
// of uri is want.
func waitListed(t *testing.T, cs *mcp.ClientSession, changed <-chan struct{}, uri string, want bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	notified := false
	for {
		select {
		case <-changed:
			notified = true
		case <-deadline:
			t.Fatalf("no list_changed notification (got one: %v) listing %s as %v: %v", notified, uri, want, resourceURIs(t, cs))
		}
		if notified && slices.Contains(resourceURIs(t, cs), uri) == want {
			return
		}
	}
}

// TestResourceListChanged: a session that disappears from the store and
// comes back is announced with notifications/resources/list_changed and
// leaves and re-enters the resource list, under the legacy handshake and
// the 2026-07-28 protocol (subscriptions/listen) alike.
func TestResourceListChanged(t *testing.T) {
	for _, version := range []string{"2025-11-25", ""} {
		t.Run("protocol "+version, func(t *testing.T) {
			root := t.TempDir()
			if err := os.CopyFS(root, os.DirFS("../testdata/fixtures/store-raw")); err != nil {
				t.Fatal(err)
			}
			cs, changed := serve(t, root, version)
			uriG := reference.EncodeURI(idG)
			if !slices.Contains(resourceURIs(t, cs), uriG) {
				t.Fatalf("session G is not listed: %v", resourceURIs(t, cs))
			}
			saved := t.TempDir()
			if err := os.Rename(filepath.Join(root, projG), filepath.Join(saved, projG)); err != nil {
				t.Fatal(err)
			}
			waitListed(t, cs, changed, uriG, false)
			if err := os.Rename(filepath.Join(saved, projG), filepath.Join(root, projG)); err != nil {
				t.Fatal(err)
			}
			waitListed(t, cs, changed, uriG, true)
		})
	}
}

// TestResourcesRankedLikeCandidates: resources/list gives the recent
// sessions in candidate order (same cwd first, newest first), not the
// SDK's URI order, each named by its label.
func TestResourcesRankedLikeCandidates(t *testing.T) {
	root, _ := filepath.Abs("../testdata/fixtures/store-raw")
	cs, _ := serve(t, root, "2025-11-25")
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpserver.ToolSearch, Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("search: %v %+v", err, res)
	}
	idx, err := sessionstore.OpenIndexed(root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache})
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if err := idx.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	svc, _ := reference.NewService(idx, reference.DefaultConfig())
	cwd := "/home/alice/proj"
	cands, err := svc.ListCandidates(context.Background(), reference.Target{CWD: &cwd}, "", 50)
	if err != nil {
		t.Fatal(err)
	}
	list, err := cs.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Resources) != len(cands) {
		t.Fatalf("%d resources, want %d", len(list.Resources), len(cands))
	}
	sortedByURI := true
	for i, r := range list.Resources {
		c := cands[i]
		if r.URI != reference.EncodeURI(c.SessionID) || r.Name != c.Label || r.MIMEType != mcpserver.MIMEType {
			t.Errorf("resource %d: %+v, want candidate %+v", i, r, c)
		}
		if i > 0 && list.Resources[i-1].URI > r.URI {
			sortedByURI = false
		}
	}
	if sortedByURI {
		t.Error("the fixture's candidate order is URI order: this test would not see a wrong order")
	}
}
