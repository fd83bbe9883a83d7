package lsp

import (
	"fmt"
	"sync/atomic"

	"go.lsp.dev/protocol"

	"github.com/dsh-lsp/dsh-lsp/lsp/position"
	"github.com/dsh-lsp/dsh-lsp/lsp/wire"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// document is an open text document.
type document struct {
	uri     string
	version int32
	// text is the document's text, edited in place by didChange at a cost
	// that follows the size of each change, not of the document.
	text *position.Text
	// gen identifies the text: a fresh number (server-wide) after every
	// change, so a snapshot can tell whether it is still current.
	gen uint64
	// content and mapper are the whole text of generation gen and its
	// position index, built at most once per generation when a request
	// or diagnostics run needs them (nil until then).
	content *string
	mapper  *position.Mapper
	// mentions is the mention scan of generation gen, made at most once
	// per generation when a completion or hover needs it (nil until
	// then): a request re-scanning the whole text costs what the text
	// does, at every keystroke.
	mentions *textMentions
	// target is the document's own target (dsh/setTarget), nil if unset.
	target *reference.Target
}

// docGen numbers document generations.
var docGen atomic.Uint64

// contentLocked returns the document's whole text, joining its chunks once
// per generation. s.mu must be held.
func (d *document) contentLocked() string {
	if d.content == nil {
		c := d.text.String()
		d.content = &c
	}
	return *d.content
}

// docSnapshot is what a request needs of a document, taken under the lock.
type docSnapshot struct {
	uri     string
	version int32
	gen     uint64
	mapper  *position.Mapper
	target  reference.Target
	env     *environment
	config  reference.Config
	caps    clientCaps
}

// snapshot returns the document's current state; ok is false when the
// document is not open. The position index is built after the lock is
// released (it is linear in the text, and notifications wait for s.mu),
// once per generation of the text: later requests on the same text reuse
// it.
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
		gen:     d.gen,
		target:  s.targetForLocked(uri),
		env:     s.env,
		config:  s.settings.config,
		caps:    s.caps,
		mapper:  d.mapper,
	}
	text, enc := d.contentLocked(), s.encoding
	s.mu.Unlock()
	if snap.mapper != nil {
		return snap, true
	}
	snap.mapper = position.NewMapper(text, enc)
	s.mu.Lock()
	if d.gen == snap.gen && d.mapper == nil {
		d.mapper = snap.mapper
	}
	s.mu.Unlock()
	return snap, true
}

// textMentions is reference.ScanText of a document generation's text.
type textMentions struct {
	mentions []reference.Mention
	problems []reference.Problem
}

// mentionsOf returns the mention scan of snap's text, made once per
// generation of the document (outside the lock, like its mapper).
func (s *Server) mentionsOf(snap docSnapshot) *textMentions {
	s.mu.Lock()
	d, ok := s.docs[snap.uri]
	if ok && d.gen == snap.gen && d.mentions != nil {
		tm := d.mentions
		s.mu.Unlock()
		return tm
	}
	s.mu.Unlock()
	tm := &textMentions{}
	tm.mentions, tm.problems = reference.ScanText(snap.mapper.Content)
	s.mu.Lock()
	if d, ok := s.docs[snap.uri]; ok && d.gen == snap.gen {
		d.mentions = tm
	}
	s.mu.Unlock()
	return tm
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
// version and text generation).
func (s *Server) isCurrent(uri string, snap docSnapshot) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.docs[uri]
	return ok && d.version == snap.version && d.gen == snap.gen
}

func (s *Server) didOpen(p *protocol.DidOpenTextDocumentParams) {
	if p.TextDocument.URI == "" {
		s.logger.Warn("didOpen without a document URI ignored")
		return
	}
	uri := string(p.TextDocument.URI)
	s.mu.Lock()
	text := position.NewText(p.TextDocument.Text)
	content := p.TextDocument.Text
	if text.Len() != len(content) {
		content = text.String() // invalid UTF-8 was replaced (JSON text never has any)
	}
	d := &document{uri: uri, version: p.TextDocument.Version, text: text, gen: docGen.Add(1), content: &content}
	if t, ok := s.pendingTargets[uri]; ok {
		d.target = &t
		delete(s.pendingTargets, uri)
	}
	s.docs[uri] = d
	s.mu.Unlock()
	s.scheduleDiagnostics(uri)
}

func (s *Server) didChange(p *protocol.DidChangeTextDocumentParams) {
	uri := string(p.TextDocument.URI)
	changes := make([]position.Change, 0, len(p.ContentChanges))
	for _, ch := range p.ContentChanges {
		switch ch := ch.(type) {
		case *protocol.TextDocumentContentChangePartial:
			changes = append(changes, position.Change{Range: &ch.Range, Text: ch.Text})
		case *protocol.TextDocumentContentChangeWholeDocument:
			changes = append(changes, position.Change{Text: ch.Text})
		}
	}
	s.mu.Lock()
	d, ok := s.docs[uri]
	if !ok {
		s.mu.Unlock()
		s.logger.Warn("didChange for a document that is not open", "uri", uri)
		return
	}
	if err := d.text.Apply(s.encoding, changes); err != nil {
		s.mu.Unlock()
		s.logger.Error("didChange not applied", "uri", uri, "error", err)
		s.showMessage(protocol.MessageTypeError, fmt.Sprintf("dsh-lsp: cannot apply the change to %s: %v", uri, err))
		return
	}
	d.gen, d.content, d.mapper, d.mentions = docGen.Add(1), nil, nil, nil
	d.version = p.TextDocument.Version
	s.mu.Unlock()
	s.scheduleDiagnostics(uri)
}

func (s *Server) didClose(p *protocol.DidCloseTextDocumentParams) {
	uri := string(p.TextDocument.URI)
	s.mu.Lock()
	delete(s.docs, uri)
	s.mu.Unlock()
	s.diag.cancel(uri, &s.bg)
	s.notify("textDocument/publishDiagnostics", wire.PublishDiagnosticsParams{URI: uri, Diagnostics: []wire.Diagnostic{}})
}
