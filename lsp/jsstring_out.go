package lsp

import (
	"strconv"

	"github.com/dsh-lsp/dsh-lsp/reference"
)

// MarshalJSON writes the item with JS JSON.stringify string semantics
// (reference.AppendJSString): an id or title holding a lone UTF-16
// surrogate (WTF-8 inside dsh-lsp) keeps its \udxxx escape, as dsh writes
// it, instead of encoding/json's U+FFFD, so a host that cites sessionId
// cites the session that exists.
func (c CandidateItem) MarshalJSON() ([]byte, error) {
	b := append([]byte(nil), `{"sessionId":`...)
	b = reference.AppendJSString(b, c.SessionID)
	b = append(b, `,"label":`...)
	b = reference.AppendJSString(b, c.Label)
	if c.CWD != nil {
		b = append(b, `,"cwd":`...)
		b = reference.AppendJSString(b, *c.CWD)
	}
	b = append(b, `,"createdAt":`...)
	b = strconv.AppendInt(b, c.CreatedAt, 10)
	b = append(b, `,"uri":`...)
	b = reference.AppendJSString(b, c.URI)
	b = append(b, `,"mention":`...)
	b = reference.AppendJSString(b, c.Mention)
	return append(b, '}'), nil
}
