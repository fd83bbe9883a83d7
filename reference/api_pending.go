package reference

// This file holds the agreed exported API of the core whose bodies are not
// written yet, so that the server and store can be built against it in
// parallel. Each owner moves a declaration into its real file when it
// implements it; the file is deleted when empty.

import (
	"context"
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

// ---- candidates.go / prepare.go (core-B) ----

// Target is the agent preparing a message: its own session (excluded from
// candidates, rejected as a self-reference) and its cwd (same-cwd ranking).
type Target struct {
	SessionID *string `json:"sessionId,omitempty"`
	CWD       *string `json:"cwd,omitempty"`
}

// Candidate is one listCandidates item.
type Candidate struct {
	SessionID string  `json:"sessionId"`
	Label     string  `json:"label"`
	CWD       *string `json:"cwd,omitempty"`
	CreatedAt int64   `json:"createdAt"`
}

// Service is the session-reference service over a Source.
type Service struct {
	source Source
	config Config
}

// NewService validates cfg and returns a service reading from src.
func NewService(src Source, cfg Config) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Service{source: src, config: cfg}, nil
}

// Config returns the service's configuration.
func (s *Service) Config() Config { return s.config }

// ListCandidates implements dsh listCandidates(agent, query, limit, signal).
func (s *Service) ListCandidates(ctx context.Context, target Target, query string, limit int64) ([]Candidate, error) {
	return nil, errPending
}

// ContextMessage is the additionalContext user message. It marshals with
// the keys source, content, role, id in that order.
type ContextMessage struct {
	Source ContextSource
	// Text is the single text block's text (the whole prompt envelope).
	Text string
	// ID is a fresh random UUID v4.
	ID string
}

// ContextSource is the context message's source object.
type ContextSource struct {
	References []ReferenceStats `json:"references"`
}

// ReferenceStats describes one retained reference in the context source.
type ReferenceStats struct {
	SessionID          string `json:"sessionId"`
	Label              string `json:"label"`
	CapturedThroughSeq *int64 `json:"capturedThroughSeq"`
	Compacted          bool   `json:"compacted"`
	OriginalMessages   int    `json:"originalMessages"`
	RetainedMessages   int    `json:"retainedMessages"`
	OmittedMessages    int    `json:"omittedMessages"`
	OmittedBytes       int64  `json:"omittedBytes"`
	Truncated          bool   `json:"truncated"`
	InputIndex         int    `json:"inputIndex"`
}

// PreparedText is the result of preparing a prompt text.
type PreparedText struct {
	// Content is the readable text (each mention replaced by @label).
	Content string `json:"content"`
	// References are deduplicated, in first-mention order.
	References []ParsedReference `json:"references"`
	// ContextMessage is nil when the text has no reference.
	ContextMessage *ContextMessage `json:"contextMessage,omitempty"`
}

// PrepareText parses text (ParseText) and prepares its references: the
// readable content plus the exact dsh context message.
func (s *Service) PrepareText(ctx context.Context, target Target, text string) (*PreparedText, error) {
	return nil, errPending
}
