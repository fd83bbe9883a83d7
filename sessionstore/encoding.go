package sessionstore

import "github.com/dsh-lsp/dsh-lsp/sessionstore/transcript"

// Encoding is a store's physical encoding (one per root).
type Encoding uint8

// Encodings and their transcript file names.
const (
	// Raw is compression "none": session.jsonl.
	Raw Encoding = iota + 1
	// Zstd is compression "zstd" (dsh's default): session.jsonl.zstd.
	Zstd
)

// FileName returns the transcript file name for e.
func (e Encoding) FileName() string {
	if e == Zstd {
		return "session.jsonl.zstd"
	}
	return "session.jsonl"
}

// transcriptFor is the store's only encoding rule: which transcript of one
// session directory is read (0: none) and which present one is skipped
// (0: none). A pinned encoding (dsh's compression setting) reads only its
// suffix. Unpinned, each directory is read by its own suffix, so a store
// holding both encodings lists every session, and a directory holding
// both reads session.jsonl.zstd, dsh's default: no other session can
// change which file is read.
func transcriptFor(pinned Encoding, hasRaw, hasZstd bool) (read, skipped Encoding) {
	switch {
	case pinned == Zstd || (pinned == 0 && hasZstd):
		if hasRaw {
			skipped = Raw
		}
		if hasZstd {
			read = Zstd
		}
	default:
		if hasZstd {
			skipped = Zstd
		}
		if hasRaw {
			read = Raw
		}
	}
	return read, skipped
}

// other is the other encoding.
func (e Encoding) other() Encoding {
	if e == Zstd {
		return Raw
	}
	return Zstd
}

// String returns the encoding name used in messages ("none" or "zstd").
func (e Encoding) String() string {
	if e == Zstd {
		return "zstd"
	}
	return "raw"
}

// framing is how transcripts of encoding e store their records.
func (e Encoding) framing() transcript.Framing {
	if e == Zstd {
		return transcript.Frames
	}
	return transcript.Lines
}
