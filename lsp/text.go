package lsp

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dsh-lsp/dsh-lsp/lsp/protocol"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// document is an open text document.
type document struct {
	uri     string
	version int32
	text    string
	// target is the document's own target (dsh/setTarget), nil if unset.
	target *reference.Target
}

// docSnapshot is what a request needs of a document, taken under the lock.
type docSnapshot struct {
	uri     string
	version int32
	mapper  *protocol.Mapper
	target  reference.Target
	env     *environment
	config  reference.Config
	caps    clientCaps
}

// snapshot returns the document's current state; ok is false when the
// document is not open. The position index is built after the lock is
// released (it is linear in the text, and notifications wait for s.mu).
func (s *Server) snapshot(uri string) (docSnapshot, bool) {
	s.mu.Lock()
	d, ok := s.docs[uri]
	if !ok {
		s.mu.Unlock()
		return docSnapshot{}, false
	}
	snap := docSnapshot{
		uri:     uri,
		version: d.version,
		target:  s.targetForLocked(uri),
		env:     s.env,
		config:  s.settings.config,
		caps:    s.caps,
	}
	text, enc := d.text, s.encoding
	s.mu.Unlock()
	snap.mapper = protocol.NewMapper(text, enc)
	return snap, true
}

// openSnapshot is snapshot for a request on uri: a document that is not
// open is an InvalidParams error naming the method.
func (s *Server) openSnapshot(method, uri string) (docSnapshot, error) {
	snap, ok := s.snapshot(uri)
	if !ok {
		return docSnapshot{}, invalidParams("%s: document %s is not open", method, uri)
	}
	return snap, nil
}

// isCurrent reports whether snap still shows the open document uri (same
// version and text), without indexing the text again.
func (s *Server) isCurrent(uri string, snap docSnapshot) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.docs[uri]
	return ok && d.version == snap.version && d.text == snap.mapper.Content
}

func (s *Server) didOpen(ctx context.Context, params json.RawMessage) {
	var p protocol.DidOpenTextDocumentParams
	if err := json.Unmarshal(params, &p); err != nil || p.TextDocument.URI == "" {
		s.logger.Warn("bad didOpen", "error", err)
		return
	}
	uri := p.TextDocument.URI
	s.mu.Lock()
	d := &document{uri: uri, version: p.TextDocument.Version, text: p.TextDocument.Text}
	if t, ok := s.pendingTargets[uri]; ok {
		d.target = &t
		delete(s.pendingTargets, uri)
	}
	s.docs[uri] = d
	s.mu.Unlock()
	s.scheduleDiagnostics(uri)
}

func (s *Server) didChange(ctx context.Context, params json.RawMessage) {
	var p protocol.DidChangeTextDocumentParams
	if err := json.Unmarshal(params, &p); err != nil {
		s.logger.Warn("bad didChange", "error", err)
		return
	}
	uri := p.TextDocument.URI
	s.mu.Lock()
	d, ok := s.docs[uri]
	if !ok {
		s.mu.Unlock()
		s.logger.Warn("didChange for a document that is not open", "uri", uri)
		return
	}
	text, err := protocol.ApplyChanges(d.text, s.encoding, p.ContentChanges)
	if err != nil {
		s.mu.Unlock()
		s.logger.Error("didChange not applied", "uri", uri, "error", err)
		s.showMessage(protocol.MessageError, fmt.Sprintf("dsh-lsp: cannot apply the change to %s: %v", uri, err))
		return
	}
	d.text = text
	d.version = p.TextDocument.Version
	s.mu.Unlock()
	s.scheduleDiagnostics(uri)
}

func (s *Server) didClose(ctx context.Context, params json.RawMessage) {
	var p protocol.DidCloseTextDocumentParams
	if err := json.Unmarshal(params, &p); err != nil {
		return
	}
	uri := p.TextDocument.URI
	s.mu.Lock()
	delete(s.docs, uri)
	s.mu.Unlock()
	s.diag.cancel(uri, &s.bg)
	s.notify("textDocument/publishDiagnostics", protocol.PublishDiagnosticsParams{URI: uri, Diagnostics: []protocol.Diagnostic{}})
}
