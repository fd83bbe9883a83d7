// Package wire is dsh-lsp's LSP wire boundary beside go.lsp.dev/protocol:
// the jsonrpc2 Codec of both ends of a connection, and the few result types
// whose encoding the library cannot produce.
//
// Params, capabilities, progress and messages are go.lsp.dev/protocol's
// generated types, encoded and decoded by its reflection-free codec. The
// types here are the results that carry session text (ids, titles, labels,
// previews): completion items, hover, diagnostics and quick fixes. dsh
// writes its JSON with JavaScript's JSON.stringify, which keeps a lone
// UTF-16 surrogate (held as WTF-8 in Go strings) as a \udxxx escape; the
// library writes U+FFFD for each of its three bytes, and also rewrites
// escapes inside completion data, so an id with a lone surrogate would not
// survive a completion/resolve round trip (TestLibraryMangles*, beside each
// encoder). These types encode by hand with jsjson.AppendJSString; the
// completion list, sent on every keystroke after "@", also skips reflection
// (BenchmarkCompletion in lsp).
//
// The package knows nothing of sessions (it does not import reference).
package wire

import (
	"encoding/json"

	"go.lsp.dev/protocol"
)

// CompletionItemKindReference is protocol.CompletionItemKindReference,
// untyped for CompletionItem.Kind.
const CompletionItemKindReference = 18

// CompletionList is a completion result.
type CompletionList struct {
	IsIncomplete bool             `json:"isIncomplete"`
	Items        []CompletionItem `json:"items"`
}

// TextEdit replaces Range with NewText.
type TextEdit struct {
	Range   protocol.Range `json:"range"`
	NewText string         `json:"newText"`
}

// MarkupContent is markdown or plain text.
type MarkupContent struct {
	Kind  string `json:"kind"`
	Value string `json:"value"`
}

// CompletionItem is one completion proposal, and the params and result of
// completionItem/resolve (which echoes the item with documentation added).
type CompletionItem struct {
	Label         string         `json:"label"`
	Kind          int            `json:"kind,omitempty"`
	Detail        string         `json:"detail,omitempty"`
	Documentation *MarkupContent `json:"documentation,omitempty"`
	SortText      string         `json:"sortText,omitempty"`
	FilterText    string         `json:"filterText,omitempty"`
	InsertText    string         `json:"insertText,omitempty"`
	TextEdit      *TextEdit      `json:"textEdit,omitempty"`
	// AdditionalTextEdits is used only for Vim ALE (see completion.StyleALE).
	AdditionalTextEdits []TextEdit      `json:"additionalTextEdits,omitempty"`
	Data                json.RawMessage `json:"data,omitempty"`
}

// Diagnostic severities: protocol.DiagnosticSeverityError and
// DiagnosticSeverityWarning, untyped for Diagnostic.Severity.
const (
	SeverityError   = 1
	SeverityWarning = 2
)

// Diagnostic is one problem in a document. Code is the string arm of the
// LSP code union: the server's codes are strings.
type Diagnostic struct {
	Range    protocol.Range  `json:"range"`
	Severity int             `json:"severity"`
	Code     string          `json:"code,omitempty"`
	Source   string          `json:"source,omitempty"`
	Message  string          `json:"message"`
	Data     json.RawMessage `json:"data,omitempty"`
}

// PublishDiagnosticsParams is textDocument/publishDiagnostics.
type PublishDiagnosticsParams struct {
	URI         string       `json:"uri"`
	Version     *int32       `json:"version,omitempty"`
	Diagnostics []Diagnostic `json:"diagnostics"`
}

// Hover is a hover result.
type Hover struct {
	Contents MarkupContent   `json:"contents"`
	Range    *protocol.Range `json:"range,omitempty"`
}

// CodeActionKindQuickFix is protocol.CodeActionKindQuickFix, untyped for
// CodeAction.Kind.
const CodeActionKindQuickFix = "quickfix"

// WorkspaceEdit holds edits per document URI.
type WorkspaceEdit struct {
	Changes map[string][]TextEdit `json:"changes"`
}

// CodeAction is one quick fix.
type CodeAction struct {
	Title       string        `json:"title"`
	Kind        string        `json:"kind,omitempty"`
	Diagnostics []Diagnostic  `json:"diagnostics,omitempty"`
	IsPreferred bool          `json:"isPreferred,omitempty"`
	Edit        WorkspaceEdit `json:"edit"`
}
