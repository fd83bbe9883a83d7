// Package sessionstore reads real dsh session stores (raw and zstd JSONL),
// read-only, and serves them as a reference.Source through one type: the
// index, Indexed (OpenIndexed).
//
// The index keeps, per session directory, the header's listing form, the
// latest title and the parse state of its transcript: the fold's state
// (transcript.Fold: dsh's legacy upgrade, message and envelope checks,
// unknown-type refusal, crash closers, surface fold, title) after the
// records read so far, where each surface record is stored, and the error
// a read of the log gives (index_log.go). A grown transcript is parsed from where the
// last parse stopped; a replaced, truncated or rewritten one from the
// start. Queries answer from the entries: ListSessions and ReadTitles from
// memory, ReadSurface by re-reading only the surface records (each checked
// against the CRC it was indexed with). The index is persisted outside the
// store (cache.go) and kept fresh by notifications and polling (fresh.go,
// watch*.go). The CLI opens it as a snapshot, or lazily (IndexOptions.Lazy:
// only the sessions read by id are parsed) for prepare.
//
// The scan rules (spec §3: torn tails, the committed region, zstd frames)
// and the fold run one record at a time (package transcript: one Cursor
// every read loops over), so the index never holds a whole log. Tests build stores from log texts with sessionstore/memstore, which
// writes them into a real layout and reads them through the index.
//
// Read-only by construction: files are opened O_RDONLY, relative to the
// root and never through a symlink below it (open_*.go); nothing is
// written, locked, renamed or created under a root. What one read may hold
// is bounded by the read limit (IndexOptions.ReadLimit; ErrReadLimit), and
// any torn final line or frame is the end of the log, never an error.
//
// Errors are *Error values with a Kind (KindNotFound, KindCorrupt,
// KindUnsupported, KindIO) and dsh's session-query code (Error.Code). A
// missing session's message is exactly dsh's `session "<id>" not found`.
//
// Policy choices where dsh's behaviour is not what an editor wants, or is
// open (spec §13):
//   - Q6, availability over strictness: dsh fails the whole listing on one
//     bad directory (identity mismatch, duplicate id, other-suffix or flat
//     transcript, unreadable header frame, retired header fields). The
//     index skips that session; a session whose header cannot be read is
//     not listed. ReadSurface and ReadTitles find a session by its
//     directory (dsh findLog), not through the listing, so such a session
//     fails with its own class (corrupt, unsupported, I/O) instead of dsh's
//     "not found".
//   - Encodings: dsh fails a root holding both; unpinned, each session
//     directory is read by its own suffix (transcriptFor: zstd when a
//     directory holds both, the other reported by Indexed.Skipped), so
//     every readable session is listed. IndexOptions.Encoding pins one,
//     like dsh's compression setting; transcripts in the other are skipped.
//   - Q3: a header without delegationDepth is not a header (as in HEAD):
//     not listed, and a read fails as corrupt.
//   - Q7: unknown event types without "ignorable": true are refused as
//     KindUnsupported (as in HEAD).
//   - Q1: upgraded July-era user messages keep their "envelope" in data;
//     choosing displayContent is the projection's job (package reference).
//   - A session/title whose title is not a string is a rejected title read
//     (dsh passes it through; a label must be a string).
package sessionstore
