// Package memstore is a session source for tests built from log texts:
// each session added is written as a raw session.jsonl into a real store
// layout in a temporary directory and read back through the index
// (sessionstore.Indexed), so a test reads exactly what the server reads.
// Overrides inject read failures and raw surface snapshots. Errors carry
// no path: the temporary directory is an artefact of the test, not of the
// session.
package memstore
