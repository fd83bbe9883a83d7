//go:build race

package sessionstore_test

// raceEnabled: the binary-level hardening tests (which measure a child
// process and generate GiB-sized bombs in this one) skip under -race;
// the race run covers the in-process ones.
const raceEnabled = true
