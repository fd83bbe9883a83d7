package sessionstore_test

// Hand-made zstd frames for the hostile-store tests: raw and RLE blocks
// under a header that declares no content size, so only decoding shows
// what a frame holds.

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

const (
	mib = 1 << 20
	// rleBlock is the largest zstd block: one RLE block of it is 4 bytes
	// on disk.
	rleBlock = 128 << 10
)

// zstdFrameHeader is a frame header without content size or checksum and
// a 128 KiB window (the decoder learns nothing of the output size up
// front).
func zstdFrameHeader() []byte {
	b := binary.LittleEndian.AppendUint32(nil, 0xFD2FB528)
	return append(b, 0x00, 7<<3) // FHD: no FCS, no checksum; window 2^(10+7)
}

func blockHeader(typ, size int, last bool) []byte {
	h := uint32(size)<<3 | uint32(typ)<<1
	if last {
		h |= 1
	}
	return []byte{byte(h), byte(h >> 8), byte(h >> 16)}
}

// rawBlocks appends data as raw blocks; the last is marked last if last.
func rawBlocks(dst, data []byte, last bool) []byte {
	for len(data) > 0 {
		n := min(len(data), rleBlock)
		dst = append(dst, blockHeader(0, n, last && n == len(data))...)
		dst = append(dst, data[:n]...)
		data = data[n:]
	}
	return dst
}

// rleBlocks appends n RLE blocks of 128 KiB of c (none marked last).
func rleBlocks(dst []byte, c byte, n int) []byte {
	for i := 0; i < n; i++ {
		dst = append(append(dst, blockHeader(1, rleBlock, false)...), c)
	}
	return dst
}

var zenc, _ = zstd.NewWriter(nil)

func zframe(s string) []byte { return zenc.EncodeAll([]byte(s), nil) }

// userMessagePrefix is a user message line up to the opening quote of its
// text (seq 4, after eventLines).
const userMessagePrefix = `{"type":"user/message","seq":4,"time":1786003000005,"data":{"content":[{"type":"text","text":"`
const userMessageSuffix = `"}],"source":{"kind":"user"},"role":"user","id":"a7000000-0000-4000-8000-000000000002"},"surfaceOp":"append"}` + "\n"

// writeZstdSession writes frames as id's zstd transcript under root.
func writeZstdSession(t *testing.T, root, id string, frames ...[]byte) string {
	t.Helper()
	path, err := sessionstore.SessionPath(root, hostileStr("/p"), id, sessionstore.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, bytes.Join(frames, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
