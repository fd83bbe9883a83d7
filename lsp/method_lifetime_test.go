package lsp_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/dsh-lsp/dsh-lsp/lsp"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/storetest"
)

// lockedBuffer is a bytes.Buffer safe for the server's logging goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestMethodOutlivesTheFrameItCameIn: a request that goes on after it has
// released the read loop still knows its method when it ends, though the
// next messages were read into the frame its method was decoded from
// (jsonrpc2 lends a request's method and params from that frame until the
// handler returns). Over a real header-framed stream, as on stdio.
func TestMethodOutlivesTheFrameItCameIn(t *testing.T) {
	var logs lockedBuffer
	bs := &blockingSource{entered: make(chan struct{})}
	opts := lsp.Options{
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		OpenSource: func(root string) (lsp.Source, error) {
			st, err := storetest.OpenSynced(root, 0)
			bs.Source = st
			return bs, err
		},
	}
	serverEnd, clientEnd := net.Pipe()
	e := startOn(t, opts, jsonrpc2.NewHeaderStream(serverEnd), jsonrpc2.NewHeaderStream(clientEnd))
	if _, err := e.Initialize(map[string]any{"sessionsDir": storeRaw}); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		errc <- e.Call(context.Background(), "dsh/prepare", map[string]any{"text": "see " + reference.FormatMention(idA, nil)}, nil)
	}()
	select {
	case <-bs.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("prepare never read the source")
	}
	prepareID := e.LastID()
	// Later messages, longer than the prepare's, read while it runs.
	for range 3 {
		var items []reference.CandidateItem
		if err := e.Call(context.Background(), "dsh/candidates", map[string]any{"limit": 1, "query": strings.Repeat("z", 64)}, &items); err != nil {
			t.Fatalf("candidates during a blocked prepare: %v", err)
		}
	}
	e.Notify("$/cancelRequest", map[string]any{"id": prepareID})
	select {
	case <-errc:
	case <-time.After(10 * time.Second):
		t.Fatal("cancelled prepare never answered")
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), `msg="request failed" method=dsh/prepare `) {
		if time.Now().After(deadline) {
			t.Fatalf("no log of the prepare's end naming its method; logs:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
