package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// DocumentRef names an open document in the params of the dsh/* methods
// (CONTRACT §5); they are decoded with encoding/json.
type DocumentRef struct {
	URI string `json:"uri"`
}

// PrepareArgs is the argument object of dsh.prepare / dsh/prepare.
type PrepareArgs struct {
	TextDocument *DocumentRef    `json:"textDocument,omitempty"`
	Text         *string         `json:"text,omitempty"`
	Target       json.RawMessage `json:"target,omitempty"`
}

// prepareInput is dsh.prepare's argument, checked: the target is nil when
// the argument gives none.
type prepareInput struct {
	args   PrepareArgs
	target *reference.Target
}

// parsePrepareParams decodes the params of dsh/prepare: the argument object
// of dsh.prepare.
func parsePrepareParams(_ string, params json.RawMessage) (prepareInput, error) {
	return parsePrepareArgs(params)
}

// parsePrepareArgs decodes and checks prepare arguments. A bare JSON string
// is taken as a document URI (some clients pass command arguments that way).
func parsePrepareArgs(raw json.RawMessage) (prepareInput, error) {
	var in prepareInput
	a := &in.args
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var uri string
		if err := json.Unmarshal(raw, &uri); err != nil {
			return in, invalidParams("dsh.prepare: invalid argument: %v", err)
		}
		a.TextDocument = &DocumentRef{URI: uri}
		return in, nil
	}
	if len(raw) == 0 || raw[0] != '{' {
		return in, invalidParams(`dsh.prepare: the argument must be an object {"textDocument":{"uri":…}} or {"text":…}`)
	}
	if err := json.Unmarshal(raw, a); err != nil {
		return in, invalidParams("dsh.prepare: invalid argument: %v", err)
	}
	hasDoc := a.TextDocument != nil && a.TextDocument.URI != ""
	switch {
	case hasDoc && a.Text != nil:
		return in, invalidParams("dsh.prepare: give either textDocument or text, not both")
	case !hasDoc && a.Text == nil:
		return in, invalidParams(`dsh.prepare: missing "textDocument.uri" or "text"`)
	}
	if len(a.Target) > 0 && string(a.Target) != "null" {
		var err error
		if in.target, err = parseTarget(a.Target, "target"); err != nil {
			return in, invalidParams("dsh.prepare: %s", err.(*SettingsError).Msg)
		}
	}
	return in, nil
}

// prepareSnap is what a prepare reads after the read loop moved on.
type prepareSnap struct {
	env    *environment
	target reference.Target
	text   string
}

// prepareSnapshot takes the text (given, or the open document's) and the
// target (given, or the document's) of dsh/prepare and dsh.prepare.
func (s *Server) prepareSnapshot(in *prepareInput) (prepareSnap, error) {
	args, target := in.args, in.target
	var snap prepareSnap
	s.mu.Lock()
	defer s.mu.Unlock()
	snap.env = s.env
	uri := ""
	if args.Text != nil {
		snap.text = *args.Text
	} else {
		d, ok := s.docs[args.TextDocument.URI]
		if !ok {
			return snap, invalidParams("dsh.prepare: document %s is not open", args.TextDocument.URI)
		}
		snap.text = d.contentLocked()
		uri = d.uri
	}
	if target != nil {
		snap.target = *target
	} else {
		snap.target = s.targetForLocked(uri)
	}
	return snap, nil
}

// prepare is the dsh/prepare request and the dsh.prepare command: prepare
// the snapshot's text, reading sessions concurrently.
func (s *Server) prepare(ctx context.Context, snap prepareSnap) (any, error) {
	pt, err := s.prepareText(ctx, snap.env, snap.target, snap.text)
	if err != nil {
		return nil, err
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
	Query        *string         `json:"query"`
	Limit        *float64        `json:"limit"`
	TextDocument *DocumentRef    `json:"textDocument"`
	Target       json.RawMessage `json:"target"`
}

// candidatesSnap is what dsh/candidates reads after the read loop moved on.
type candidatesSnap struct {
	env    *environment
	target reference.Target
	query  string
	limit  int64
}

// candidatesSnapshot checks the params of dsh/candidates and snapshots the
// environment, the target (given, or the document's) and the limit.
func (s *Server) candidatesSnapshot(p *candidatesParams) (candidatesSnap, error) {
	var c candidatesSnap
	var target *reference.Target
	if len(p.Target) > 0 && string(p.Target) != "null" {
		t, err := parseTarget(p.Target, "target")
		if err != nil {
			return c, invalidParams("dsh/candidates: %s", err.(*SettingsError).Msg)
		}
		target = t
	}
	s.mu.Lock()
	c.env = s.env
	c.limit = s.settings.config.CandidateLimit
	if target == nil {
		uri := ""
		if p.TextDocument != nil {
			uri = p.TextDocument.URI
		}
		c.target = s.targetForLocked(uri)
	} else {
		c.target = *target
	}
	s.mu.Unlock()
	if p.Limit != nil {
		l, err := reference.CheckCandidateLimit(*p.Limit)
		if err != nil {
			return c, err
		}
		c.limit = l
	}
	if p.Query != nil {
		c.query = *p.Query
	}
	return c, nil
}

// dshCandidates is dsh/candidates: the candidate list for hosts with their
// own picker.
func (s *Server) dshCandidates(ctx context.Context, c candidatesSnap) (any, error) {
	cands, err := s.candidates(ctx, c.env, c.target, c.query, c.limit, false)
	if err != nil {
		return nil, err
	}
	b, err := jsjson.Marshal(reference.CandidateItems(cands))
	if err != nil {
		return nil, fmt.Errorf("dsh/candidates: %w", err)
	}
	return jsonrpc2.RawMessage(b), nil
}
