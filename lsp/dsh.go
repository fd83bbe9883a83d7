package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/dsh-lsp/dsh-lsp/lsp/protocol"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// PrepareArgs is the argument object of dsh.prepare / dsh/prepare.
type PrepareArgs struct {
	TextDocument *protocol.TextDocumentIdentifier `json:"textDocument,omitempty"`
	Text         *string                          `json:"text,omitempty"`
	Target       json.RawMessage                  `json:"target,omitempty"`
}

// parsePrepareArgs decodes and checks prepare arguments. A bare JSON string
// is taken as a document URI (some clients pass command arguments that way).
func parsePrepareArgs(raw json.RawMessage) (PrepareArgs, *reference.Target, error) {
	var a PrepareArgs
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var uri string
		if err := json.Unmarshal(raw, &uri); err != nil {
			return a, nil, invalidParams("dsh.prepare: invalid argument: %v", err)
		}
		a.TextDocument = &protocol.TextDocumentIdentifier{URI: uri}
		return a, nil, nil
	}
	if len(raw) == 0 || raw[0] != '{' {
		return a, nil, invalidParams(`dsh.prepare: the argument must be an object {"textDocument":{"uri":…}} or {"text":…}`)
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return a, nil, invalidParams("dsh.prepare: invalid argument: %v", err)
	}
	hasDoc := a.TextDocument != nil && a.TextDocument.URI != ""
	switch {
	case hasDoc && a.Text != nil:
		return a, nil, invalidParams("dsh.prepare: give either textDocument or text, not both")
	case !hasDoc && a.Text == nil:
		return a, nil, invalidParams(`dsh.prepare: missing "textDocument.uri" or "text"`)
	}
	var t *reference.Target
	if len(a.Target) > 0 && string(a.Target) != "null" {
		var err error
		if t, err = parseTarget(a.Target, "target"); err != nil {
			return a, nil, invalidParams("dsh.prepare: %s", err.(*SettingsError).Msg)
		}
	}
	return a, t, nil
}

// prepare is the dsh/prepare request and the dsh.prepare command: parse
// the arguments, snapshot the text and target inline, then prepare
// concurrently.
func (s *Server) prepare(ctx context.Context, raw json.RawMessage) (any, error) {
	args, target, err := parsePrepareArgs(raw)
	if err != nil {
		return nil, err
	}
	var text string
	s.mu.Lock()
	env := s.env
	if args.Text != nil {
		text = *args.Text
		if target == nil {
			t := s.targetForLocked("")
			target = &t
		}
	} else {
		d, ok := s.docs[args.TextDocument.URI]
		if !ok {
			s.mu.Unlock()
			return nil, invalidParams("dsh.prepare: document %s is not open", args.TextDocument.URI)
		}
		text = d.contentLocked()
		if target == nil {
			t := s.targetForLocked(d.uri)
			target = &t
		}
	}
	s.mu.Unlock()
	release(ctx)
	pt, err := s.prepareText(ctx, env, *target, text)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	if err != nil {
		return nil, requestError(ctx, err)
	}
	b, err := reference.MarshalPrepared(pt)
	if err != nil {
		return nil, jsonrpc2.NewError(jsonrpc2.InternalError, err.Error())
	}
	return jsonrpc2.RawMessage(b), nil
}

// prepareText prepares text for target. Reading sessions waits for a read
// slot and reads through the surface cache; the result is cached while the
// sessions it read are unchanged (backpressure.go). A text without
// mentions reads nothing.
func (s *Server) prepareText(ctx context.Context, env *environment, target reference.Target, text string) (*reference.PreparedText, error) {
	if mentions, _ := reference.ScanText(text); len(mentions) == 0 {
		return env.service.PrepareText(ctx, target, text)
	}
	key := newPrepareKey(env, target, text)
	if pt, ok := s.prepared.get(key); ok {
		return pt, nil
	}
	done, err := s.reads.acquire(ctx, "dsh.prepare")
	if err != nil {
		return nil, err
	}
	defer done()
	if pt, ok := s.prepared.get(key); ok {
		return pt, nil // prepared by a request queued before this one
	}
	src := &recordingSurfaces{cachedSurfaces: cachedSurfaces{Source: env.source, s: s, env: env}, ok: true}
	svc, err := reference.NewService(src, env.service.Config())
	if err != nil {
		return nil, err
	}
	start := time.Now()
	pt, err := svc.PrepareText(ctx, target, text)
	if err == nil && pt.ContextMessage != nil {
		src.mu.Lock()
		dirs, ok := src.dirs, src.ok
		src.mu.Unlock()
		if ok {
			s.prepared.put(key, dirs, start, pt)
		}
	}
	return pt, err
}

// candidatesParams is dsh/candidates.
type candidatesParams struct {
	Query        *string                          `json:"query"`
	Limit        *float64                         `json:"limit"`
	TextDocument *protocol.TextDocumentIdentifier `json:"textDocument"`
	Target       json.RawMessage                  `json:"target"`
}

// dshCandidates is dsh/candidates: the candidate list for hosts with their
// own picker.
func (s *Server) dshCandidates(ctx context.Context, params json.RawMessage) (any, error) {
	var p candidatesParams
	if len(params) > 0 && string(params) != "null" {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, invalidParams("dsh/candidates: invalid params: %v", err)
		}
	}
	var target *reference.Target
	if len(p.Target) > 0 && string(p.Target) != "null" {
		t, err := parseTarget(p.Target, "target")
		if err != nil {
			return nil, invalidParams("dsh/candidates: %s", err.(*SettingsError).Msg)
		}
		target = t
	}
	s.mu.Lock()
	env := s.env
	limit := s.settings.config.CandidateLimit
	if target == nil {
		uri := ""
		if p.TextDocument != nil {
			uri = p.TextDocument.URI
		}
		t := s.targetForLocked(uri)
		target = &t
	}
	s.mu.Unlock()
	if p.Limit != nil {
		l, err := reference.CheckCandidateLimit(*p.Limit)
		if err != nil {
			return nil, requestError(ctx, err)
		}
		limit = l
	}
	query := ""
	if p.Query != nil {
		query = *p.Query
	}
	release(ctx)
	cands, err := s.candidates(ctx, env, *target, query, limit, false)
	if err != nil {
		return nil, requestError(ctx, err)
	}
	b, err := protocol.Marshal(reference.CandidateItems(cands))
	if err != nil {
		return nil, fmt.Errorf("dsh/candidates: %w", err)
	}
	return jsonrpc2.RawMessage(b), nil
}
