// Package transcript reads one dsh session transcript, raw JSONL lines
// (session.jsonl) or zstd frames (session.jsonl.zstd), from an io.ReaderAt:
// one Cursor hands out the records in order under the framing rules of
// spec §3 (torn tail, committed region, seq contiguity, read limit), resumes
// a grown log from a saved Position and re-reads one record by its Loc; one
// Fold applies the rules of spec §4–§5 (legacy upgrade, validation, crash
// closers, surface fold, latest title) to them, with a plain-data state
// that package sessionstore persists and resumes. Errors are *Error values
// carrying dsh's error class; sessionstore attaches the session id and path.
package transcript
