// Package completion implements session-mention completion: when a mention
// query is active at the cursor (CONTRACT §3) and which completion items the
// dsh candidates become, in a shape that every tested LSP client (VS Code,
// Neovim 0.7–0.12, Emacs Eglot, Vim ALE) turns into exactly the canonical
// mention `@[escaped label](dsh-session:…)`.
package completion

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dsh-lsp/dsh-lsp/lsp/position"
	"github.com/dsh-lsp/dsh-lsp/lsp/wire"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// Query is an active mention query: the text between an `@` and the cursor.
type Query struct {
	// Text is QUERY (possibly empty).
	Text string
	// Start is the byte offset just after the `@`; End is the cursor.
	Start, End int
}

// opensMention reports whether r may directly precede the `@` of a mention.
func opensMention(r rune) bool {
	switch r {
	case '(', '[', '{', '"', '\'', '`':
		return true
	}
	return reference.IsJSWhitespace(r) // JavaScript \s, as dsh's grammar
}

// inQuery reports whether r, size bytes long in the text, may be part of
// QUERY. An invalid byte (RuneError of size 1) ends it; a real U+FFFD
// character does not.
func inQuery(r rune, size int) bool {
	switch r {
	case '@', '[', ']', '(', ')':
		return false
	}
	return !reference.IsJSWhitespace(r) && !(r == utf8.RuneError && size == 1)
}

// FindQuery returns the mention query active at byte offset cursor of text,
// if any: the text before the cursor on its line ends with `@`+QUERY, the
// `@` starts the line or follows whitespace or one of ( [ { " ' `, and the
// cursor is not inside an existing @[…](…) mention or bare URI.
func FindQuery(text string, cursor int) (Query, bool) {
	return FindQueryScanned(text, cursor, func() ([]reference.Mention, []reference.Problem) {
		return reference.ScanText(text)
	})
}

// FindQueryScanned is FindQuery with the mentions and problems of text
// (reference.ScanText) from scan, called only when the cursor follows an
// `@`+QUERY: a server keeps one scan per version of a document.
func FindQueryScanned(text string, cursor int, scan func() ([]reference.Mention, []reference.Problem)) (Query, bool) {
	if cursor < 0 || cursor > len(text) {
		return Query{}, false
	}
	// Walk back over QUERY characters to the `@`.
	i := cursor
	for i > 0 {
		r, n := utf8.DecodeLastRuneInString(text[:i])
		if r == '\n' || r == '\r' {
			return Query{}, false
		}
		if r == '@' {
			break
		}
		if !inQuery(r, n) {
			return Query{}, false
		}
		i -= n
	}
	if i == 0 {
		return Query{}, false // no `@`
	}
	at := i - 1 // offset of '@'
	if at > 0 {
		r, _ := utf8.DecodeLastRuneInString(text[:at])
		if r != '\n' && r != '\r' && !opensMention(r) {
			return Query{}, false // a@b
		}
	}
	if insideMention(cursor, scan) {
		return Query{}, false
	}
	return Query{Text: text[at+1 : cursor], Start: at + 1, End: cursor}, true
}

// insideMention reports whether cursor lies strictly inside a mention or a
// rejected mention-shaped URI of the text scan gives.
func insideMention(cursor int, scan func() ([]reference.Mention, []reference.Problem)) bool {
	mentions, problems := scan()
	for _, m := range mentions {
		if m.Span.Start < cursor && cursor < m.Span.End {
			return true
		}
	}
	for _, p := range problems {
		if p.Span.Start < cursor && cursor < p.Span.End {
			return true
		}
	}
	return false
}

// VisibleLabel returns label on one line with control characters made
// visible (OneLine), and an empty label as `""`.
func VisibleLabel(label string) string {
	if label == "" {
		return `""`
	}
	return OneLine(label)
}

// OneLine returns s with every control character, line break and
// invisible direction control made visible, so that session text (a
// hostile title, id or cwd) shows on one line and cannot fake lines or
// reorder what follows it: C0 controls become their Control Pictures (␊
// for a newline), DEL ␡, and other controls, U+2028/U+2029, U+FEFF and the
// bidirectional formatting characters `\uXXXX`. Text without them is
// returned as is.
func OneLine(s string) string {
	clean := true
	for _, r := range s {
		if needsPicture(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r < 0x20:
			b.WriteRune(0x2400 + r)
		case r == 0x7f:
			b.WriteRune('␡')
		case needsPicture(r):
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			// The original bytes: a lone surrogate (WTF-8) stays itself.
			_, size := utf8.DecodeRuneInString(s[i:])
			b.WriteString(s[i : i+size])
		}
	}
	return b.String()
}

// needsPicture reports whether OneLine replaces r.
func needsPicture(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f || unicode.IsControl(r):
		return true
	case r == '\u2028' || r == '\u2029' || r == '\uFEFF' || r == '\u061C' || r == '\u200E' || r == '\u200F':
		return true
	case r >= '\u202A' && r <= '\u202E', r >= '\u2066' && r <= '\u2069':
		return true // bidi embeddings, overrides and isolates
	}
	return false
}

// InsertLabel is the label a completion (or a quick fix) writes into the
// user's text: OneLine(label), so that a title holding line breaks cannot
// add lines (say a fake "## Referenced sessions" heading) to the prompt
// outside dsh's untrusted envelope. An empty label stays empty. The
// mention still names the session exactly: only its label is shown this
// way, and dsh's escaping (reference.FormatMention) applies to the result.
func InsertLabel(label string) string { return OneLine(label) }

// ItemData is the data carried by a completion item for
// completionItem/resolve.
type ItemData struct {
	SessionID string  `json:"sessionId"`
	Label     string  `json:"label"`
	CWD       *string `json:"cwd,omitempty"`
	CreatedAt int64   `json:"createdAt"`
	// Snippet is set on content-search hits: the matched passage.
	Snippet string `json:"snippet,omitempty"`
}

// FormatTime formats a dsh createdAt (Unix milliseconds) for people.
func FormatTime(ms int64) string { return string(appendTime(nil, ms)) }

func appendTime(dst []byte, ms int64) []byte {
	return time.UnixMilli(ms).UTC().AppendFormat(dst, "2006-01-02 15:04 UTC")
}

// appendDetail appends an item's detail line: the cwd (or "no cwd", on
// one line, Shortened) and creation time.
func appendDetail(dst []byte, cwd *string, createdAt int64) []byte {
	where := "no cwd"
	if cwd != nil {
		where = Shorten(OneLine(*cwd))
	}
	return appendTime(append(append(dst, where...), " · "...), createdAt)
}

// DisplayRunes is how many characters of a label or cwd a completion
// item shows; the rest is cut with "…". Titles and cwds are bounded in
// the store (sessionstore.MaxTitleBytes, MaxCWDBytes), but a menu line
// of kilobytes helps no one. The inserted mention keeps the whole label.
const DisplayRunes = 200

// Shorten cuts s after DisplayRunes characters, marking the cut with "…".
func Shorten(s string) string {
	n := 0
	for i := range s {
		if n == DisplayRunes {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// Items turns candidates into completion items for query q. Accepting an
// item leaves the `@` in place and replaces QUERY with `[escaped
// label](uri)`, so the text becomes exactly reference.FormatMention of the
// session id and InsertLabel(label) (the label on one line). The
// item carries that text both as textEdit (range QUERY) and insertText,
// because Neovim 0.7 and ALE ignore the range and insert at the keyword
// start (after the `@`, which is no keyword character anywhere).
// filterText begins with QUERY so that client-side filtering keeps every
// item the server matched (on id or cwd too); sortText keeps dsh's order.
func Items(cands []reference.Candidate, q Query, m *position.Mapper) []wire.CompletionItem {
	return ItemsStyled(cands, q, m, StylePortable)
}

// Style is a completion item shape.
type Style int

// Item shapes.
const (
	// StylePortable is the shape of Items.
	StylePortable Style = iota
	// StyleALE is for Vim ALE, which inserts only the text before the first
	// "(" of an item's text (it strips call parentheses) and applies
	// additionalTextEdits after the insertion, at the positions given (in
	// bytes, as ALE counts columns). The item inserts "[escaped label]"
	// (up to the first "(") and an additional edit adds the rest right
	// after it, in post-insertion coordinates.
	StyleALE
)

// ItemsForText is Items for a query found in text, with edit ranges in
// UTF-16 (LSP's default encoding); callers outside the server (the demo)
// use it without building a position mapper themselves.
func ItemsForText(cands []reference.Candidate, q Query, text string) []wire.CompletionItem {
	return Items(cands, q, position.NewMapper(text, position.UTF16))
}
