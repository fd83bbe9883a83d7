package sessionstore

import "github.com/dsh-lsp/dsh-lsp/sessionstore/transcript"

// ZstdDecodedForTest returns how many bytes zstd event-frame decodes have
// produced in this process so far.
func ZstdDecodedForTest() int64 { return transcript.DecodedBytes.Load() }

// DecodedPerReadForTest is the decoded-bytes budget of one read at limit.
func DecodedPerReadForTest(limit int64) int64 {
	return transcript.DecodedPerReadFactor * limit
}

// DropDecodeBuffersForTest drops the decode buffers kept for reuse (as
// the idle timer does), so that heap measurements see what the index
// itself holds.
func DropDecodeBuffersForTest() { transcript.DropSpareBuffers() }
