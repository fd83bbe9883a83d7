package reference

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// StepDecision is the downstream decision of a dsh agent/pre-step, as seen
// by the session-reference listener that wraps it (conformance §11).
type StepDecision struct {
	// Reject is a downstream rejection: it passes through untouched.
	Reject bool
	// Messages are the accepted step's messages, JSON message objects
	// ({content, source, role, id}).
	Messages []json.RawMessage
}

// StepMessage is one message of the decision after the listener ran.
type StepMessage struct {
	// Message is the message object.
	Message json.RawMessage
	// InputIndex is the index of the input message this one stands for, or
	// -1 for an inserted context message.
	InputIndex int
	// Unchanged reports that Message is the input message itself (dsh
	// returns the same object).
	Unchanged bool
}

// StepResult is the listener's decision.
type StepResult struct {
	Reject   bool
	Messages []StepMessage
}

// PreStep runs dsh's agent/pre-step listener over a downstream decision. A
// rejection is returned as is, and nothing is parsed or read. In an accepted
// step, a message whose source kind is not "user" passes through unchanged
// without parsing. For a user message every text block is parsed (ParseText)
// and the references of all its blocks are gathered in block order; without
// any, the message is unchanged. Otherwise the message is prepared (Prepare)
// and replaced by the rewritten message (same keys and id, text blocks with
// readable text, other blocks kept) followed by its context message. Any
// parse or preparation failure fails the step.
func (s *Service) PreStep(ctx context.Context, target Target, decision StepDecision) (StepResult, error) {
	if decision.Reject {
		return StepResult{Reject: true}, nil
	}
	out := make([]StepMessage, 0, len(decision.Messages))
	for i, msg := range decision.Messages {
		rewritten, refs, err := rewriteDirectMessage(msg)
		if err != nil {
			return StepResult{}, err
		}
		if len(refs) == 0 {
			out = append(out, StepMessage{Message: msg, InputIndex: i, Unchanged: true})
			continue
		}
		prepared, err := s.Prepare(ctx, target, refs)
		if err != nil {
			return StepResult{}, err
		}
		out = append(out, StepMessage{Message: rewritten, InputIndex: i})
		if prepared.ContextMessage != nil {
			out = append(out, StepMessage{Message: prepared.ContextMessage.AppendJSON(nil), InputIndex: -1})
		}
	}
	return StepResult{Messages: out}, nil
}

// rewriteDirectMessage parses the text blocks of a direct user message.
// It returns no references for any other message, or one without mentions.
func rewriteDirectMessage(msg []byte) (rewritten []byte, refs []Reference, err error) {
	kind, _ := jsjson.String(jsjson.ObjectField(jsjson.ObjectField(msg, "source"), "kind"))
	if kind != "user" {
		return nil, nil, nil
	}
	content := jsjson.ObjectField(msg, "content")
	blocks := make([][]byte, 0)
	var parseErr error
	isArray, err := jsjson.Elements(content, func(block []byte) {
		if parseErr != nil {
			return
		}
		typ, _ := jsjson.String(jsjson.ObjectField(block, "type"))
		text, isString := jsjson.String(jsjson.ObjectField(block, "text"))
		if typ != "text" || !isString {
			blocks = append(blocks, block)
			return
		}
		parsed, err := ParseText(text)
		if err != nil {
			parseErr = err
			return
		}
		for _, r := range parsed.References {
			label := r.Label
			refs = append(refs, Reference{SessionID: r.SessionID, Label: &label})
		}
		blocks = append(blocks, replaceJSONMember(block, "text", []byte(jsjson.Quote(parsed.Text))))
	})
	if parseErr != nil {
		return nil, nil, parseErr
	}
	if err != nil {
		return nil, nil, fmt.Errorf("session-reference pre-step: malformed message content: %w", err)
	}
	if !isArray || len(refs) == 0 {
		return nil, nil, nil
	}
	newContent := []byte{'['}
	for i, b := range blocks {
		if i > 0 {
			newContent = append(newContent, ',')
		}
		newContent = append(newContent, b...)
	}
	newContent = append(newContent, ']')
	return replaceJSONMember(msg, "content", newContent), refs, nil
}

// replaceJSONMember returns a compact copy of the object obj with the value
// of member name replaced (JS {...obj, name: value}: the key keeps its
// place). It is appended when absent.
func replaceJSONMember(obj []byte, name string, value []byte) []byte {
	out := []byte{'{'}
	found := false
	n := 0
	_ = jsjson.Members(obj, func(key, v []byte) {
		if n > 0 {
			out = append(out, ',')
		}
		n++
		out = append(out, key...)
		out = append(out, ':')
		if jsjson.KeyIs(key, name) {
			found = true
			v = value
		}
		out = append(out, v...)
	})
	if !found {
		if n > 0 {
			out = append(out, ',')
		}
		out = append(out, jsjson.Quote(name)...)
		out = append(out, ':')
		out = append(out, value...)
	}
	return append(out, '}')
}
