package reference

// This file holds the agreed exported API of the core whose bodies are not
// written yet, so that the server and store can be built against it in
// parallel. Each owner moves a declaration into its real file when it
// implements it; the file is deleted when empty.

import (
	"encoding/json"
	"errors"
)

var errPending = errors.New("reference: not implemented yet")

// ---- config.go (core-A) ----

// Config holds the session-reference limits.
type Config struct {
	MaxReferences     int64 `json:"maxReferences"`
	CandidateLimit    int64 `json:"candidateLimit"`
	MaxReferenceBytes int64 `json:"maxReferenceBytes"`
}

// DefaultConfig returns dsh's defaults: 3, 50, 65536.
func DefaultConfig() Config { return Config{3, 50, 65536} }

// Validate checks c with dsh's rules and messages.
func (c Config) Validate() error { return errPending }

// ConfigFromJSON reads a dsh config object (keys optional, defaults for
// absent keys) and validates each present JSON value the way dsh's
// constructor does (numbers only, safe integers, > 0, maxReferences <= 3).
func ConfigFromJSON(raw json.RawMessage) (Config, error) { return Config{}, errPending }
