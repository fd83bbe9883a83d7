package sessionstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRewriteInPlaceIsNoticedOnReRead: a surface read re-reads the records
// the index located by offset. When a log is rewritten in place after it
// was indexed (same size, inode and even mtime, so nothing tells the index
// it changed), the re-read must not hand the new, unchecked bytes on: it
// notices the record changed, reads the log again and answers what a read
// of the new bytes answers (here: an unknown event type, refused), and the
// session reads normally once the bytes are restored.
func TestRewriteInPlaceIsNoticedOnReRead(t *testing.T) {
	root := t.TempDir()
	cwd := "/home/alice/proj"
	var b strings.Builder
	b.WriteString(`{"type":"session","version":0,"id":"r2","createdAt":1,"cwd":"/home/alice/proj","delegationDepth":0}` + "\n")
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&b, `{"type":"user/message","seq":%d,"time":1,"data":{"content":[{"type":"text","text":"hello %d"}],"source":{"kind":"user"},"role":"user","id":"m%d"},"surfaceOp":"append"}`+"\n", i, i, i)
	}
	good := []byte(b.String())
	path, err := SessionPath(root, &cwd, "r2", Raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, good, 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	x, err := OpenIndexed(root, IndexOptions{CacheDir: NoCache, Snapshot: true})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	ctx := context.Background()
	if err := x.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if s, err := x.ReadSurface(ctx, "r2"); err != nil || len(s.Events) != 20 {
		t.Fatalf("before the rewrite: %v", err)
	}

	// Flip the "/" of event 10's type in place, keeping the mtime.
	i := bytes.Index(good, []byte(`"user/message","seq":10,`)) + len(`"user`)
	rewrite := func(c byte) {
		t.Helper()
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte{c}, int64(i)); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if err := os.Chtimes(path, time.Time{}, fi.ModTime()); err != nil {
			t.Fatal(err)
		}
	}
	rewrite(good[i] ^ 0xFF)
	_, err = x.ReadSurface(ctx, "r2")
	var se *Error
	if !errors.As(err, &se) || se.Kind != KindUnsupported || !strings.Contains(err.Error(), "event 10 has unknown type") {
		t.Fatalf("after an in-place rewrite of event 10's type: %v, want the unknown-type refusal of the new bytes", err)
	}
	rewrite(good[i])
	if s, err := x.ReadSurface(ctx, "r2"); err != nil || len(s.Events) != 20 {
		t.Fatalf("after restoring the bytes: %v", err)
	}
}
