package reference

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// Reference is one session reference handed to Prepare: a session id and
// an optional label (nil means the id is the label; "" is a valid label).
type Reference struct {
	SessionID string
	Label     *string
}

// Prepared is the outcome of preparing a message's references.
type Prepared struct {
	// References are the normalized references: deduplicated (the first
	// occurrence's label wins), labels resolved, in input order.
	References []ParsedReference
	// ContextMessage is nil when there is no reference.
	ContextMessage *ContextMessage
	// Data holds each reference's tag-safe data object, in order: the
	// pieces of the prompt's JSON array (each one within the byte budget).
	Data [][]byte
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
	parsed, err := ParseText(text)
	if err != nil {
		return nil, err
	}
	refs := make([]Reference, len(parsed.References))
	for i := range parsed.References {
		refs[i] = Reference{SessionID: parsed.References[i].SessionID, Label: &parsed.References[i].Label}
	}
	prepared, err := s.Prepare(ctx, target, refs)
	if err != nil {
		return nil, err
	}
	return &PreparedText{Content: parsed.Text, References: prepared.References, ContextMessage: prepared.ContextMessage}, nil
}

// Prepare implements dsh prepare(agent, content, references, signal) for
// typed references (conformance §7; the content is the caller's and is not
// touched). See PrepareJSON for the exact order of checks.
func (s *Service) Prepare(ctx context.Context, target Target, refs []Reference) (*Prepared, error) {
	n := s.newNormalizer(target)
	for _, ref := range refs {
		label := ref.SessionID
		if ref.Label != nil {
			label = *ref.Label
		}
		if err := n.add(ref.SessionID, label); err != nil {
			return nil, err
		}
	}
	return s.prepareNormalized(ctx, n)
}

// PrepareJSON implements dsh prepare for references given as raw JSON
// values, validated the way dsh validates untrusted input:
//
//  1. Normalize in order; the first bad item decides the error: a non-object
//     (INVALID_REFERENCE "session reference must be an object"), an array or
//     an object without a string sessionId or with a non-string label
//     (INVALID_REFERENCE "session reference must contain a string sessionId
//     and optional string label"), the target's own id (SELF_REFERENCE).
//     Repeated ids are skipped (first label wins); then more than
//     maxReferences distinct ids is TOO_MANY, and nothing is read.
//  2. No reference: an empty result, even when ctx is already cancelled.
//  3. ctx already cancelled: CANCELLED.
//  4. Every distinct source is read once, in parallel; a failure fails the
//     call (READ_FAILED, or CANCELLED when ctx is done) with the first
//     failing reference in input order, whichever read fails first, and a
//     cancellation while reads are pending returns CANCELLED at once.
//  5. Each source is projected and retained in input order;
//     BUDGET_EXCEEDED when one cannot fit, with no partial result.
func (s *Service) PrepareJSON(ctx context.Context, target Target, items []json.RawMessage) (*Prepared, error) {
	n := s.newNormalizer(target)
	for _, item := range items {
		id, label, err := referenceFromJSON(item)
		if err != nil {
			return nil, err
		}
		if err := n.add(id, label); err != nil {
			return nil, err
		}
	}
	return s.prepareNormalized(ctx, n)
}

// RetainOne reads one session and retains it the way a reference to it
// with the given label would be: it returns the tag-safe data object (what
// the reference adds to the prompt's JSON array) and its stats
// (InputIndex 0). Errors are those of
// Prepare (READ_FAILED, CANCELLED, BUDGET_EXCEEDED).
func (s *Service) RetainOne(ctx context.Context, sessionID, label string) ([]byte, ReferenceStats, error) {
	if err := ctx.Err(); err != nil {
		return nil, ReferenceStats{}, errCancelled(err)
	}
	ref := ParsedReference{SessionID: sessionID, Label: label}
	all, err := s.readAndRetain(ctx, []ParsedReference{ref})
	if err != nil {
		return nil, ReferenceStats{}, err
	}
	retained := all[0]
	return retained.Data.AppendJSON(nil), newReferenceStats(ref, retained, 0), nil
}

// normalizer accumulates references in order with dsh's checks.
type normalizer struct {
	target Target
	seen   map[string]bool
	refs   []ParsedReference
}

func (s *Service) newNormalizer(target Target) *normalizer {
	return &normalizer{target: target, seen: make(map[string]bool)}
}

// add checks one valid reference: self-reference fails at once, a repeated
// id is skipped.
func (n *normalizer) add(id, label string) error {
	if n.target.isSelf(id) {
		return newError(CodeSelfReference, "session "+jsjson.Quote(id)+" cannot reference itself", nil)
	}
	if n.seen[id] {
		return nil
	}
	n.seen[id] = true
	n.refs = append(n.refs, ParsedReference{SessionID: id, Label: label})
	return nil
}

// prepareNormalized runs the steps after normalization.
func (s *Service) prepareNormalized(ctx context.Context, n *normalizer) (*Prepared, error) {
	refs := n.refs
	if int64(len(refs)) > s.config.MaxReferences {
		return nil, newError(CodeTooMany, "a message may reference at most "+strconv.FormatInt(s.config.MaxReferences, 10)+" sessions", nil)
	}
	if len(refs) == 0 {
		return &Prepared{References: []ParsedReference{}}, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, errCancelled(err)
	}
	all, err := s.readAndRetain(ctx, refs)
	if err != nil {
		return nil, err
	}
	stats := make([]ReferenceStats, len(refs))
	data := make([][]byte, len(refs))
	for i, ref := range refs {
		stats[i] = newReferenceStats(ref, all[i], i)
		data[i] = all[i].Data.AppendJSON(nil)
	}
	return &Prepared{References: refs, ContextMessage: newContextMessage(stats, buildPrompt(data)), Data: data}, nil
}

// readAndRetain reads every source in parallel, one ReadSurface each, and
// retains each one in its own goroutine as soon as it is read, so that
// the (large) surfaces need not all be held at once. A read failure is
// reported once the references before it are read (the later reads are
// then cancelled), so it is the first failing one in reference order; it
// returns as soon as ctx is cancelled, without waiting for pending reads. Retention failures are
// reported only once every read succeeded, in reference order, as dsh
// retains its sources in order after reading them all.
func (s *Service) readAndRetain(ctx context.Context, refs []ParsedReference) ([]*Retained, error) {
	readCtx, cancel := context.WithCancel(ctx)
	defer cancel() // stops reads still running after a failure
	type result struct {
		index     int
		retained  *Retained
		readErr   error
		retainErr error
	}
	results := make(chan result, len(refs))
	for i, ref := range refs {
		go func() {
			surface, err := s.source.ReadSurface(readCtx, ref.SessionID)
			if err == nil && surface == nil {
				err = fmt.Errorf("session %s: the store returned no surface", jsjson.Quote(ref.SessionID))
			}
			if err != nil {
				results <- result{index: i, readErr: err}
				return
			}
			retained, err := Retain(surface, ref.Label, s.config.MaxReferenceBytes)
			results <- result{index: i, retained: retained, retainErr: err}
		}()
	}
	all := make([]*Retained, len(refs))
	retainErrs := make([]error, len(refs))
	readErrs := make([]error, len(refs))
	done := make([]bool, len(refs))
	for range refs {
		select {
		case <-ctx.Done():
			return nil, errCancelled(ctx.Err())
		case r := <-results:
			done[r.index] = true
			all[r.index], retainErrs[r.index], readErrs[r.index] = r.retained, r.retainErr, r.readErr
		}
		// The error is the first failing reference in mention order, as
		// dsh reports it, whichever read fails first: a failure is
		// returned once every reference before it has been read.
		for i := range refs {
			if !done[i] {
				break
			}
			if readErrs[i] != nil {
				if err := ctx.Err(); err != nil {
					return nil, errCancelled(err)
				}
				return nil, newError(CodeReadFailed, "failed to read referenced session: "+readErrs[i].Error(), readErrs[i])
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, errCancelled(err)
	}
	for _, err := range retainErrs {
		if err != nil {
			return nil, err
		}
	}
	return all, nil
}

// Messages of the reference shape checks.
const (
	msgReferenceNotObject = "session reference must be an object"
	msgReferenceShape     = "session reference must contain a string sessionId and optional string label"
)

// referenceFromJSON validates one raw reference as dsh does with JS
// property access: an object (arrays are objects in JS but have no string
// sessionId) with a string sessionId and, when the key is present, a string
// label. Extra keys are ignored; the last duplicate key wins.
func referenceFromJSON(item json.RawMessage) (id, label string, err error) {
	i := jsjson.SkipSpace(item, 0)
	if i >= len(item) || (item[i] != '{' && item[i] != '[') {
		return "", "", newError(CodeInvalidReference, msgReferenceNotObject, nil)
	}
	if item[i] == '[' {
		return "", "", newError(CodeInvalidReference, msgReferenceShape, nil)
	}
	var rawID, rawLabel []byte
	if jsjson.Members(item, func(key, value []byte) {
		switch {
		case jsjson.KeyIs(key, "sessionId"):
			rawID = value
		case jsjson.KeyIs(key, "label"):
			rawLabel = value
		}
	}) != nil {
		return "", "", newError(CodeInvalidReference, msgReferenceNotObject, nil)
	}
	id, ok := jsjson.String(rawID)
	if !ok {
		return "", "", newError(CodeInvalidReference, msgReferenceShape, nil)
	}
	if rawLabel == nil {
		return id, id, nil
	}
	label, ok = jsjson.String(rawLabel)
	if !ok {
		return "", "", newError(CodeInvalidReference, msgReferenceShape, nil)
	}
	return id, label, nil
}
