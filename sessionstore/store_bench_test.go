package sessionstore_test

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// benchStore writes one session of about n events in enc.
func benchStore(b *testing.B, enc sessionstore.Encoding, batches int) (*sessionstore.Store, int64) {
	root := b.TempDir()
	log := newLiveLog("bench", batches, rand.New(rand.NewSource(3)))
	path, _ := sessionstore.SessionPath(root, nil, "bench", enc)
	os.MkdirAll(filepath.Dir(path), 0o755)
	hdr := `{"type":"session","version":0,"id":"bench","createdAt":7,"delegationDepth":0}` + "\n"
	var data []byte
	t := &testing.T{}
	frame := func(s string) []byte {
		if enc == sessionstore.Zstd {
			return zstdFrames(t, true, s)
		}
		return []byte(s)
	}
	data = append(data, frame(hdr)...)
	for _, batch := range log.batches {
		data = append(data, frame(strings.Join(batch, "\n")+"\n")...)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	st, _ := sessionstore.Open(root)
	return st, int64(len(data))
}

func BenchmarkReadSurface(b *testing.B) {
	for _, enc := range []sessionstore.Encoding{sessionstore.Raw, sessionstore.Zstd} {
		b.Run(enc.String(), func(b *testing.B) {
			st, size := benchStore(b, enc, 2000)
			b.SetBytes(size)
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := st.ReadSurface(ctx, "bench"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReadSmallLogs reads the surface of a small raw log (a few KiB,
// as most sessions of a store are): the streamed read's buffer is sized
// to the file, not a zeroed 1 MiB (chunkSize).
func BenchmarkReadSmallLogs(b *testing.B) {
	st, size := benchStore(b, sessionstore.Raw, 5)
	b.SetBytes(size)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := st.ReadSurface(ctx, "bench"); err != nil {
			b.Fatal(err)
		}
	}
}
