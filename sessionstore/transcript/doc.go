// Package transcript reads one dsh session transcript: bytes → records →
// fold. It is pure (no goroutines, no file system: an io.ReaderAt or a
// byte slice in) and is what the index (package sessionstore) reads every
// session log with.
//
// A transcript is raw JSONL lines (session.jsonl) or zstd frames
// (session.jsonl.zstd), the first line or frame the session header
// (header.go). One Cursor (cursor.go) reads it, and every read loops over
// it: Next hands out the records in order, applying the framing rules of
// spec §3 (torn tail, committed region, seq contiguity, packed rows: the
// line scanner, scanner.go; zstd frames and bounded decoding: zstd.go;
// the read limit and the decode budgets: budget.go); Resume continues a
// grown log from a saved Position; ReadAt re-reads one record by its Loc
// through a window (window.go). ReadHeader reads only the header.
//
// Records (record.go) then go through the one fold (fold.go): legacy
// upgrade (legacy.go), validation (validate.go), crash closers, the
// surface fold and the latest title. A fold's state is plain data, so the
// index persists it and resumes it. The full load (load.go: ScanRaw +
// LoadLog) keeps every event; the in-memory source and the tests' oracle
// use it.
//
// Errors are *Error values carrying the dsh error class (Kind) and
// whether the backend read found them; package sessionstore attaches the
// session id and path.
package transcript
