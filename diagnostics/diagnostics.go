// Package diagnostics finds the session-mention problems of CONTRACT §4 in
// a prompt text and the quick fixes for them. Findings are in byte offsets;
// ToLSP converts them to LSP diagnostics in the negotiated encoding.
package diagnostics

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
	"github.com/dsh-lsp/dsh-lsp/lsp/position"
	"github.com/dsh-lsp/dsh-lsp/lsp/wire"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// Source is the diagnostic source name.
const Source = "dsh"

// Diagnostic codes (CONTRACT §4).
const (
	CodeInvalidURI        = "invalid-uri"
	CodeNoncanonicalURI   = "noncanonical-uri"
	CodeUnknownSession    = "unknown-session"
	CodeSelfReference     = "self-reference"
	CodeTooManyReferences = "too-many-references"
)

// Severity is an LSP diagnostic severity.
type Severity int

// Severities used here.
const (
	Error   Severity = wire.SeverityError
	Warning Severity = wire.SeverityWarning
)

// String returns "error" or "warning", as `dsh-lsp check` prints them.
func (s Severity) String() string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	}
	return fmt.Sprintf("severity(%d)", int(s))
}

// Finding is one problem in a text.
type Finding struct {
	Span     reference.Span
	Severity Severity
	Code     string
	Message  string
}

// Env is what checking needs besides the text.
type Env struct {
	// Target is the document's target (self-reference check).
	Target reference.Target
	// MaxReferences is the configured limit of distinct references.
	MaxReferences int64
	// Known reports whether the store lists a session id. Nil when the
	// listing is not available: unknown-session is then not reported.
	Known func(id string) bool
}

// KnownIDs returns an Env.Known that reports whether id is one of the
// listed sessions.
func KnownIDs(headers []reference.SessionHeader) func(id string) bool {
	return (&reference.Catalog{Headers: headers}).Known
}

// Check returns the findings of text in appearance order.
func Check(text string, env Env) []Finding {
	mentions, problems := reference.ScanText(text)
	var out []Finding
	for _, p := range problems {
		// The whole match, like the other codes: for a markdown mention
		// the @[label](…) text, for a bare URI the URI.
		f := Finding{Span: p.Span, Severity: Error, Message: problemMessage(p)}
		if p.Kind == reference.MentionMarkdown {
			f.Code = CodeInvalidURI
		} else {
			f.Code = CodeNoncanonicalURI
		}
		out = append(out, f)
	}
	seen := map[string]int{} // id → distinct index (self excluded)
	for _, m := range mentions {
		self := env.Target.SessionID != nil && *env.Target.SessionID == m.SessionID
		if self {
			out = append(out, Finding{Span: m.Span, Severity: Error, Code: CodeSelfReference,
				Message: fmt.Sprintf("session %s cannot reference itself", jsjson.Quote(m.SessionID))})
			continue
		}
		idx, ok := seen[m.SessionID]
		if !ok {
			idx = len(seen)
			seen[m.SessionID] = idx
		}
		if env.MaxReferences > 0 && int64(idx) >= env.MaxReferences {
			out = append(out, Finding{Span: m.Span, Severity: Error, Code: CodeTooManyReferences,
				Message: fmt.Sprintf("a message may reference at most %d sessions", env.MaxReferences)})
		}
		if env.Known != nil && !env.Known(m.SessionID) {
			out = append(out, Finding{Span: m.Span, Severity: Warning, Code: CodeUnknownSession,
				Message: fmt.Sprintf("unknown session %s: the session store does not list it", jsjson.Quote(m.SessionID))})
		}
	}
	slices.SortStableFunc(out, func(a, b Finding) int { return a.Span.Start - b.Span.Start })
	return out
}

func problemMessage(p reference.Problem) string {
	msg := "invalid session reference URI " + jsjson.Quote(p.URI)
	if p.Err != nil {
		msg = p.Err.Message
	}
	if canon, ok := CanonicalURI(p.URI); ok {
		msg += "; the canonical URI is " + canon
	}
	return msg
}

// ToLSP converts findings to LSP diagnostics with ranges from m. Findings
// come in text order (Check sorts them), so one forward sweep for the
// starts and one for the ends map them all: thousands of mentions on one
// line cost one pass over the line, not one per diagnostic.
func ToLSP(fs []Finding, m *position.Mapper) []wire.Diagnostic {
	out := make([]wire.Diagnostic, 0, len(fs))
	starts, ends := m.Sweep(), m.Sweep()
	for _, f := range fs {
		out = append(out, wire.Diagnostic{
			Range:    position.Range{Start: starts.Position(f.Span.Start), End: ends.Position(f.Span.End)},
			Severity: int(f.Severity),
			Code:     f.Code,
			Source:   Source,
			Message:  f.Message,
		})
	}
	return out
}

// CanonicalURI decodes a malformed or non-canonical session URI leniently
// (padding, standard-alphabet characters, non-zero trailing bits,
// whitespace or unneeded escapes in the JSON) and returns the canonical URI
// of the id it denotes. ok is false when uri does not denote a string id or
// is already canonical.
func CanonicalURI(uri string) (string, bool) {
	payload, ok := strings.CutPrefix(uri, reference.URIPrefix)
	if !ok {
		return "", false
	}
	payload = strings.TrimRight(strings.TrimSpace(payload), "=")
	payload = strings.NewReplacer("+", "-", "/", "_").Replace(payload)
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil || !utf8.Valid(raw) {
		return "", false
	}
	var id string
	if err := json.Unmarshal(raw, &id); err != nil {
		return "", false
	}
	canon := reference.EncodeURI(id)
	if canon == uri {
		return "", false
	}
	return canon, true
}

// Locator maps byte offsets of one text to 0-based lines and UTF-8 byte
// columns, with line ends as LSP counts them (LF, CR, CRLF). It is how the
// CLI's check and the demo print FILE:LINE:COL without a wire package.
type Locator struct{ m *position.Mapper }

// NewLocator indexes the line starts of text once.
func NewLocator(text string) Locator {
	return Locator{m: position.NewMapper(text, position.UTF8)}
}

// LineColumn returns the 0-based line and UTF-8 byte column of offset.
func (l Locator) LineColumn(offset int) (line, column int) {
	p := l.m.Position(offset)
	return int(p.Line), int(p.Character)
}
