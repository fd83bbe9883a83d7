//go:build linux

package sessionstore_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// TestMalformedZstdErrorsSayWhatHappened: a frame holding a block over the
// format's 128 KiB maximum is corrupt (no read limit helps, so none is
// suggested), and a header frame of compressed blocks that decodes past
// the 1 MiB header bound (with no declared size, so the decoder stops at
// its buffer's end) fails with the header limit, not as a corrupt block.
// The index and the full load agree on the oversized block.
func TestMalformedZstdErrorsSayWhatHappened(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	// A raw block of 1 MiB holding one valid event line.
	line := `{"type":"todo/write","seq":0,"time":1,"data":{"x":"` + strings.Repeat("a", 1<<20) + `"}}` + "\n"
	big := append(zstdFrameHeader(), blockHeader(0, len(line), true)...)
	big = append(big, line...)
	writeZstdSession(t, root, "bigblock", zframe(hdrLine("bigblock")), big)
	// A header line padded to 28 MiB, compressed as a stream (no content
	// size in the frame header).
	var hdr bytes.Buffer
	enc, err := zstd.NewWriter(&hdr)
	if err != nil {
		t.Fatal(err)
	}
	h := hdrLine("hdrbomb")
	enc.Write([]byte(h[:len(h)-2] + `,"x":"`))
	for i := 0; i < 28; i++ {
		enc.Write(bytes.Repeat([]byte("abcdefghijklmnopqrstuvwxyz012345"), 32768))
	}
	enc.Write([]byte("\"}\n"))
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	writeZstdSession(t, root, "hdrbomb", hdr.Bytes(), zframe(eventLines("hdrbomb", "hb")))

	st, err := sessionstore.OpenWith(root, sessionstore.Options{ReadLimit: 1024 << 20})
	if err != nil {
		t.Fatal(err)
	}
	x, err := sessionstore.OpenIndexed(root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache, NoWatch: true, ReadLimit: 1024 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	ctx := context.Background()
	if err := x.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	for _, src := range []struct {
		name string
		src  interface {
			ReadSurface(context.Context, string) (*reference.Surface, error)
		}
	}{{"full load", st}, {"index", x}} {
		_, err = src.src.ReadSurface(ctx, "bigblock")
		if err == nil || errors.Is(err, sessionstore.ErrReadLimit) || !strings.Contains(err.Error(), "larger than the format's maximum") ||
			strings.Contains(err.Error(), "raise it") {
			t.Errorf("%s: bigblock: %v, want a corrupt-session error naming the oversized block, suggesting no read limit", src.name, err)
		}
	}
	_, err = st.ReadSurface(ctx, "hdrbomb")
	if err == nil || !errors.Is(err, sessionstore.ErrReadLimit) || !strings.Contains(err.Error(), "header limit") ||
		strings.Contains(err.Error(), "max block size") || strings.Contains(err.Error(), "--max-read-mb") {
		t.Errorf("hdrbomb: %v, want the header limit error (a fixed limit, not the read limit)", err)
	}
}
