// Package protocol is dsh-lsp's small LSP protocol boundary: the wire types
// of the subset of LSP 3.17 the server speaks, encoded with encoding/json, and
// the jsonrpc2 codec (the position mapper is lsp/position).
//
// The server uses go.lsp.dev/jsonrpc2 for framing and dispatch, and
// go.lsp.dev/protocol for method names, error codes and cancellation; its
// payloads are these plain structs so that every byte on the wire (context
// messages in particular) is under the server's control.
package protocol

import (
	"bytes"
	"encoding/json"

	lspproto "go.lsp.dev/protocol"
)

// Position is a zero-based line and character offset (lsp/position maps
// it to byte offsets).
type Position = lspproto.Position

// Range is a half-open range [Start, End).
type Range = lspproto.Range

// TextDocumentIdentifier names a document.
type TextDocumentIdentifier struct {
	URI string `json:"uri"`
}

// VersionedTextDocumentIdentifier names a document at a version.
type VersionedTextDocumentIdentifier struct {
	URI     string `json:"uri"`
	Version int32  `json:"version"`
}

// TextDocumentItem is an opened document.
type TextDocumentItem struct {
	URI        string `json:"uri"`
	LanguageID string `json:"languageId"`
	Version    int32  `json:"version"`
	Text       string `json:"text"`
}

// TextDocumentPositionParams is a position inside a document.
type TextDocumentPositionParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
	Position     Position               `json:"position"`
}

// WorkspaceFolder is one workspace folder.
type WorkspaceFolder struct {
	URI  string `json:"uri"`
	Name string `json:"name"`
}

// InitializeParams is the subset of initialize params the server reads.
type InitializeParams struct {
	ProcessID             *int32            `json:"processId"`
	RootURI               *string           `json:"rootUri"`
	RootPath              *string           `json:"rootPath"`
	WorkspaceFolders      []WorkspaceFolder `json:"workspaceFolders"`
	InitializationOptions json.RawMessage   `json:"initializationOptions"`
	Capabilities          struct {
		General *struct {
			PositionEncodings []string `json:"positionEncodings"`
		} `json:"general"`
		Window *struct {
			WorkDoneProgress bool `json:"workDoneProgress"`
		} `json:"window"`
		Workspace *struct {
			Configuration *bool `json:"configuration"`
		} `json:"workspace"`
		TextDocument *struct {
			Hover *struct {
				ContentFormat []string `json:"contentFormat"`
			} `json:"hover"`
			Completion *struct {
				CompletionItem *struct {
					DocumentationFormat []string `json:"documentationFormat"`
				} `json:"completionItem"`
				ContextSupport *bool `json:"contextSupport"`
			} `json:"completion"`
		} `json:"textDocument"`
	} `json:"capabilities"`
	ClientInfo *struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"clientInfo"`
}

// InitializeResult is the answer to initialize.
type InitializeResult struct {
	Capabilities ServerCapabilities `json:"capabilities"`
	ServerInfo   ServerInfo         `json:"serverInfo"`
}

// ServerInfo names the server.
type ServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// ServerCapabilities is what the server announces.
type ServerCapabilities struct {
	PositionEncoding       string                  `json:"positionEncoding,omitempty"`
	TextDocumentSync       TextDocumentSyncOptions `json:"textDocumentSync"`
	CompletionProvider     *CompletionOptions      `json:"completionProvider,omitempty"`
	HoverProvider          bool                    `json:"hoverProvider,omitempty"`
	CodeActionProvider     *CodeActionOptions      `json:"codeActionProvider,omitempty"`
	ExecuteCommandProvider *ExecuteCommandOptions  `json:"executeCommandProvider,omitempty"`
}

// Text document sync kinds.
const (
	SyncNone        = 0
	SyncFull        = 1
	SyncIncremental = 2
)

// TextDocumentSyncOptions says how documents are synced.
type TextDocumentSyncOptions struct {
	OpenClose bool `json:"openClose"`
	Change    int  `json:"change"`
}

// CompletionOptions announces completion.
type CompletionOptions struct {
	TriggerCharacters []string `json:"triggerCharacters,omitempty"`
	ResolveProvider   bool     `json:"resolveProvider,omitempty"`
}

// CodeActionOptions announces code actions.
type CodeActionOptions struct {
	CodeActionKinds []string `json:"codeActionKinds,omitempty"`
}

// ExecuteCommandOptions lists the server's commands.
type ExecuteCommandOptions struct {
	Commands []string `json:"commands"`
}

// DidOpenTextDocumentParams is textDocument/didOpen.
type DidOpenTextDocumentParams struct {
	TextDocument TextDocumentItem `json:"textDocument"`
}

// DidCloseTextDocumentParams is textDocument/didClose.
type DidCloseTextDocumentParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
}

// DidChangeTextDocumentParams is textDocument/didChange.
type DidChangeTextDocumentParams struct {
	TextDocument   VersionedTextDocumentIdentifier  `json:"textDocument"`
	ContentChanges []TextDocumentContentChangeEvent `json:"contentChanges"`
}

// TextDocumentContentChangeEvent is an incremental change (Range set) or
// the whole new text (Range nil).
type TextDocumentContentChangeEvent struct {
	Range *Range `json:"range,omitempty"`
	Text  string `json:"text"`
}

// DidChangeConfigurationParams is workspace/didChangeConfiguration.
type DidChangeConfigurationParams struct {
	Settings json.RawMessage `json:"settings"`
}

// Completion trigger kinds.
const (
	CompletionTriggerInvoked   = 1
	CompletionTriggerCharacter = 2
)

// CompletionParams is textDocument/completion.
type CompletionParams struct {
	TextDocumentPositionParams
	Context *struct {
		TriggerKind      int     `json:"triggerKind"`
		TriggerCharacter *string `json:"triggerCharacter,omitempty"`
	} `json:"context,omitempty"`
}

// CompletionItemKindReference is CompletionItemKind.Reference.
const CompletionItemKindReference = 18

// CompletionList is a completion result.
type CompletionList struct {
	IsIncomplete bool             `json:"isIncomplete"`
	Items        []CompletionItem `json:"items"`
}

// TextEdit replaces Range with NewText.
type TextEdit struct {
	Range   Range  `json:"range"`
	NewText string `json:"newText"`
}

// MarkupContent is markdown or plain text.
type MarkupContent struct {
	Kind  string `json:"kind"`
	Value string `json:"value"`
}

// CompletionItem is one completion proposal.
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

// Diagnostic severities.
const (
	SeverityError       = 1
	SeverityWarning     = 2
	SeverityInformation = 3
	SeverityHint        = 4
)

// Diagnostic is one problem in a document.
type Diagnostic struct {
	Range    Range           `json:"range"`
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

// HoverParams is textDocument/hover.
type HoverParams = TextDocumentPositionParams

// Hover is a hover result.
type Hover struct {
	Contents MarkupContent `json:"contents"`
	Range    *Range        `json:"range,omitempty"`
}

// CodeActionParams is textDocument/codeAction.
type CodeActionParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
	Range        Range                  `json:"range"`
	Context      struct {
		Diagnostics []Diagnostic `json:"diagnostics"`
		Only        []string     `json:"only,omitempty"`
	} `json:"context"`
}

// CodeActionKindQuickFix is the quick fix kind.
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

// ExecuteCommandParams is workspace/executeCommand.
type ExecuteCommandParams struct {
	Command   string            `json:"command"`
	Arguments []json.RawMessage `json:"arguments,omitempty"`
}

// Message types of window/showMessage.
const (
	MessageError   = 1
	MessageWarning = 2
	MessageInfo    = 3
	MessageLog     = 4
)

// ShowMessageParams is window/showMessage.
type ShowMessageParams struct {
	Type    int    `json:"type"`
	Message string `json:"message"`
}

// WorkDoneProgressCreateParams is window/workDoneProgress/create.
type WorkDoneProgressCreateParams struct {
	Token string `json:"token"`
}

// ProgressParams is $/progress.
type ProgressParams struct {
	Token string `json:"token"`
	Value any    `json:"value"`
}

// WorkDoneProgressBegin starts a progress report.
type WorkDoneProgressBegin struct {
	Kind        string `json:"kind"` // "begin"
	Title       string `json:"title"`
	Cancellable bool   `json:"cancellable"`
	Message     string `json:"message,omitempty"`
}

// WorkDoneProgressReport is an intermediate progress report.
type WorkDoneProgressReport struct {
	Kind       string `json:"kind"` // "report"
	Message    string `json:"message,omitempty"`
	Percentage *int   `json:"percentage,omitempty"`
}

// WorkDoneProgressEnd ends a progress report.
type WorkDoneProgressEnd struct {
	Kind    string `json:"kind"` // "end"
	Message string `json:"message,omitempty"`
}

// Marshal encodes v as compact JSON without HTML escaping (so `<`, `>` and
// `&` in session text reach the client as written).
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
