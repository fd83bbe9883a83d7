// Package sessionstore reads real dsh session stores (raw and zstd JSONL),
// read-only, and serves them as a reference.Source through one type: the
// index, Indexed (OpenIndexed).
//
// The index keeps, per session directory, the header's listing form, the
// latest title and the transcript's parse state (package transcript's fold
// after the records read so far, where each surface record lies, the
// read's error). A grown transcript is parsed from where the last parse
// stopped, a replaced, truncated or rewritten one from the start; one whose
// signature alone changed (touched, copied, restored: the CRC-32C of its
// bytes is the one the parse recorded) keeps its entry unparsed.
// ListSessions and ReadTitles answer from memory; ReadSurface re-reads the
// surface records, each checked against its CRC. Each parse state is kept
// encoded (a few hundred bytes) and decoded only while a read or a resumed
// parse uses it. The index is persisted outside the store (cache.go: a
// varint file a restart takes as it is; the parse states lie in their own
// section, read from the file when used — during a large first pass, from
// a spill file, package internal/spillfile — and the catalog's search
// index is read apart and dropped once decoded) and kept fresh by
// notifications and polling (fresh.go, watch*.go); after a restart,
// completion answers before the first refresh under the checks of
// restart.go. The CLI opens it as a snapshot, lazily for prepare.
//
// Read-only by construction: files are opened O_RDONLY, relative to the
// root and never through a symlink below it (package internal/beneath),
// in the directories dsh names (package storepath); nothing under a
// root is written, locked, renamed or created. One read is bounded by the
// read limit (ErrReadLimit); a torn final line or frame ends the log.
// Errors are *Error values with a Kind; a missing session's message is
// exactly dsh's. Where this differs from dsh on purpose (a bad session is
// skipped, not the whole listing; each directory is read by its own suffix
// unless IndexOptions.Encoding pins one): README, "Differences from dsh".
package sessionstore
