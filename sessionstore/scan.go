package sessionstore

// Encoding is a store's physical encoding (one per root).
type Encoding int

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

// transcriptFor decides which transcript of one session directory is read
// and which is skipped; it is the store's only encoding rule, used by
// listing, lookup by id and the index alike. With a pinned encoding (dsh's
// compression setting) only that suffix is read. Unpinned, each directory
// is read by its own suffix, so a store holding both encodings (a user who
// switched compression) lists every session; a directory holding both
// transcripts reads session.jsonl.zstd, the file dsh writes by default.
// The choice depends on that directory alone, so no other session can
// change which file is read. skipped is the encoding of a transcript that
// is present but not read (reported), else 0; read is 0 when none is.
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
