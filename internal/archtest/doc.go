// Package archtest holds no code: its test asserts the layering rules of
// docs/ARCHITECTURE.md on the module's import graph (as `go list` reports
// it, test-only imports excluded), so that a rule broken by a new import
// fails `go test ./...` instead of waiting for a review.
package archtest
