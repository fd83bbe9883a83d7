//go:build !race

package sessionstore_test

// raceEnabled: see race_on_hardening_test.go.
const raceEnabled = false
