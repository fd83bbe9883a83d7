// Package transcript reads one dsh session transcript: bytes → records →
// fold. It is pure (no goroutines, no file system: an io.ReaderAt or a
// byte slice in) and is what the index (package sessionstore) parses
// every session log with.
//
// A transcript is raw JSONL lines (session.jsonl) or zstd frames
// (session.jsonl.zstd), the first line or frame the session header
// (header.go). The framing rules of spec §3 — torn tail, committed region,
// seq contiguity, packed rows, the read limit and the decode budgets —
// are applied by the line scanner (scanlines.go) over the frames of
// zstd.go. Records (record.go) then go through the one fold (fold.go):
// legacy upgrade (legacy.go), validation (validate.go), crash closers,
// the surface fold and the latest title. A fold's state is plain data, so
// the index persists it and resumes a grown log where it stopped. The
// full load (load.go: ScanRaw + LoadLog) keeps every event; the in-memory
// source and the tests' oracle use it.
//
// Errors are *Error values carrying the dsh error class (Kind) and
// whether the backend read found them; package sessionstore attaches the
// session id and path.
package transcript
