package lsp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"

	"github.com/google/uuid"
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

// prepareText prepares text for target, memoized per version of every
// session the text cites (their reads go through the read limit and the
// surface memo). A memoized result is served with a fresh context message
// id (a UUID v4, as each prepare must): everything else is what preparing
// the same text over the same sessions gives.
func (s *Server) prepareText(ctx context.Context, env *environment, target reference.Target, text string) (*reference.PreparedText, error) {
	key, ok := prepareKey(ctx, env, target, text)
	if !ok {
		return env.prepareService.PrepareText(ctx, target, text)
	}
	pt, err := memoize(ctx, &s.memo, key, func(ctx context.Context) (*reference.PreparedText, int64, error) {
		pt, err := env.prepareService.PrepareText(ctx, target, text)
		if err != nil {
			return nil, 0, err
		}
		if pt.References == nil {
			pt.References = []reference.ParsedReference{}
		}
		return pt, preparedSize(pt), nil
	})
	if err != nil {
		return nil, err
	}
	return withFreshID(pt), nil
}

// prepareKey is the memo key of preparing text for target in env: the
// text, the target and the settings by digest, and the version of every
// session the text cites. ok is false when the result must not be kept: the
// text cites no session or does not parse (nothing is read), or a cited
// session has no version to name (sessionstore.Indexed.Version).
func prepareKey(ctx context.Context, env *environment, target reference.Target, text string) (memoKey, bool) {
	parsed, err := reference.ParseText(text)
	if err != nil || len(parsed.References) == 0 {
		return memoKey{}, false
	}
	versions := sha256.New()
	for _, r := range parsed.References {
		v, ok := env.source.Version(ctx, r.SessionID)
		if !ok {
			return memoKey{}, false
		}
		fmt.Fprintf(versions, "%q %q\n", r.SessionID, v)
	}
	request := sha256.New()
	cwd, id := targetKey(target)
	fmt.Fprintf(request, "%q %q %+v\n", cwd, id, env.config)
	request.Write([]byte(text))
	return memoKey{kind: memoPrepare, root: env.root, version: string(versions.Sum(nil)), detail: string(request.Sum(nil))}, true
}

// preparedSize estimates the memory a prepared text holds.
func preparedSize(pt *reference.PreparedText) int64 {
	n := int64(len(pt.Content)) + 256
	for _, r := range pt.References {
		n += int64(len(r.SessionID)+len(r.Label)) + 64
	}
	if cm := pt.ContextMessage; cm != nil {
		n += int64(len(cm.Text)) + 256*int64(len(cm.Source.References))
	}
	return n
}

// withFreshID returns a copy of a memoized prepared text whose context
// message (if any) has a fresh id; the memoized value is never modified.
func withFreshID(pt *reference.PreparedText) *reference.PreparedText {
	cp := *pt
	if pt.ContextMessage != nil {
		cm := *pt.ContextMessage
		cm.ID = uuid.NewString()
		cp.ContextMessage = &cm
	}
	return &cp
}

// candidatesParams is dsh/candidates.
type candidatesParams struct {
	Query        *string         `json:"query"`
	Limit        *float64        `json:"limit"`
	TextDocument *DocumentRef    `json:"textDocument"`
	Target       json.RawMessage `json:"target"`
}

// listSnap is what a listing request (dsh/candidates, dsh/search) reads
// after the read loop moved on.
type listSnap struct {
	env    *environment
	target reference.Target
	query  string
	limit  int64
}

// listRequest is a listing request's params, decoded.
type listRequest struct {
	// uri is the document whose target applies ("": the workspace's),
	// unless target is given.
	uri    string
	target *reference.Target
	query  *string
	limit  *float64
}

// listSnapshot snapshots the environment, the target, the query and the
// limit of a listing request: the given limit (checked, at most maxLimit),
// else defaultLimit of the settings.
func (s *Server) listSnapshot(r listRequest, defaultLimit func(reference.Config) int64, maxLimit int64) (listSnap, error) {
	var c listSnap
	if r.query != nil {
		c.query = *r.query
	}
	s.mu.Lock()
	c.env = s.env
	c.limit = defaultLimit(s.settings.config)
	if r.target != nil {
		c.target = *r.target
	} else {
		c.target = s.targetForLocked(r.uri)
	}
	s.mu.Unlock()
	if r.limit != nil {
		l, err := reference.CheckCandidateLimit(*r.limit)
		if err != nil {
			return c, err
		}
		c.limit = min(l, maxLimit)
	}
	return c, nil
}

// candidatesSnapshot checks the params of dsh/candidates and snapshots the
// environment, the target (given, or the document's) and the limit (given,
// or the candidateLimit setting).
func (s *Server) candidatesSnapshot(p *candidatesParams) (listSnap, error) {
	r := listRequest{query: p.Query, limit: p.Limit}
	if len(p.Target) > 0 && string(p.Target) != "null" {
		t, err := parseTarget(p.Target, "target")
		if err != nil {
			return listSnap{}, invalidParams("dsh/candidates: %s", err.(*SettingsError).Msg)
		}
		r.target = t
	}
	if p.TextDocument != nil {
		r.uri = p.TextDocument.URI
	}
	return s.listSnapshot(r, func(c reference.Config) int64 { return c.CandidateLimit }, math.MaxInt64)
}

// dshCandidates is dsh/candidates: the candidate list for hosts with their
// own picker.
func (s *Server) dshCandidates(ctx context.Context, c listSnap) (any, error) {
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
