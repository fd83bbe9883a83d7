package wire

import (
	"strconv"

	"go.lsp.dev/protocol"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// AppendJSON appends the JSON encoding of l to dst without reflection. A
// completion list is the server's most frequent large response (one per
// keystroke after "@"), so it skips encoding/json's reflection and the
// re-validation of nested raw values. The output equals what Marshal
// produces, after decoding.
func (l *CompletionList) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"isIncomplete":`...)
	dst = strconv.AppendBool(dst, l.IsIncomplete)
	dst = append(dst, `,"items":[`...)
	for i := range l.Items {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = l.Items[i].AppendJSON(dst)
	}
	return append(dst, "]}"...)
}

// AppendJSON appends the JSON encoding of it to dst (see
// CompletionList.AppendJSON). Data must be valid JSON; it is copied as is.
func (it *CompletionItem) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"label":`...)
	dst = jsjson.AppendJSString(dst, it.Label, false)
	if it.Kind != 0 {
		dst = append(dst, `,"kind":`...)
		dst = strconv.AppendInt(dst, int64(it.Kind), 10)
	}
	field := func(name, v string) {
		if v != "" {
			dst = append(dst, `,"`...)
			dst = append(dst, name...)
			dst = append(dst, `":`...)
			dst = jsjson.AppendJSString(dst, v, false)
		}
	}
	field("detail", it.Detail)
	if it.Documentation != nil {
		dst = append(dst, `,"documentation":{"kind":`...)
		dst = jsjson.AppendJSString(dst, it.Documentation.Kind, false)
		dst = append(dst, `,"value":`...)
		dst = jsjson.AppendJSString(dst, it.Documentation.Value, false)
		dst = append(dst, '}')
	}
	field("sortText", it.SortText)
	field("filterText", it.FilterText)
	field("insertText", it.InsertText)
	if it.TextEdit != nil {
		dst = append(dst, `,"textEdit":`...)
		dst = it.TextEdit.appendJSON(dst)
	}
	if len(it.AdditionalTextEdits) > 0 {
		dst = append(dst, `,"additionalTextEdits":[`...)
		for i := range it.AdditionalTextEdits {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = it.AdditionalTextEdits[i].appendJSON(dst)
		}
		dst = append(dst, ']')
	}
	if len(it.Data) > 0 {
		dst = append(dst, `,"data":`...)
		dst = append(dst, it.Data...)
	}
	return append(dst, '}')
}

func (te *TextEdit) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"range":`...)
	dst = appendRange(dst, te.Range)
	dst = append(dst, `,"newText":`...)
	dst = jsjson.AppendJSString(dst, te.NewText, false)
	return append(dst, '}')
}

func appendRange(dst []byte, r protocol.Range) []byte {
	dst = append(dst, `{"start":`...)
	dst = appendPosition(dst, r.Start)
	dst = append(dst, `,"end":`...)
	dst = appendPosition(dst, r.End)
	return append(dst, '}')
}

func appendPosition(dst []byte, p protocol.Position) []byte {
	dst = append(dst, `{"line":`...)
	dst = strconv.AppendUint(dst, uint64(p.Line), 10)
	dst = append(dst, `,"character":`...)
	dst = strconv.AppendUint(dst, uint64(p.Character), 10)
	return append(dst, '}')
}

// The MarshalJSON methods below make encoding/json (Marshal, the Codec)
// write the strings that can carry session ids, titles and prompt text with
// JS JSON.stringify semantics (jsjson.AppendJSString): a lone UTF-16
// surrogate, WTF-8 inside dsh-lsp, stays a \udxxx escape instead of
// becoming U+FFFD (hover text, diagnostic messages, quick-fix edits).

// MarshalJSON implements json.Marshaler.
func (m MarkupContent) MarshalJSON() ([]byte, error) {
	dst := append([]byte(nil), `{"kind":`...)
	dst = jsjson.AppendJSString(dst, m.Kind, false)
	dst = append(dst, `,"value":`...)
	dst = jsjson.AppendJSString(dst, m.Value, false)
	return append(dst, '}'), nil
}

// MarshalJSON implements json.Marshaler.
func (te TextEdit) MarshalJSON() ([]byte, error) { return te.appendJSON(nil), nil }

// MarshalJSON implements json.Marshaler. Data must be valid JSON.
func (d Diagnostic) MarshalJSON() ([]byte, error) {
	dst := append([]byte(nil), `{"range":`...)
	dst = appendRange(dst, d.Range)
	dst = append(dst, `,"severity":`...)
	dst = strconv.AppendInt(dst, int64(d.Severity), 10)
	if d.Code != "" {
		dst = append(dst, `,"code":`...)
		dst = jsjson.AppendJSString(dst, d.Code, false)
	}
	if d.Source != "" {
		dst = append(dst, `,"source":`...)
		dst = jsjson.AppendJSString(dst, d.Source, false)
	}
	dst = append(dst, `,"message":`...)
	dst = jsjson.AppendJSString(dst, d.Message, false)
	if len(d.Data) > 0 {
		dst = append(dst, `,"data":`...)
		dst = append(dst, d.Data...)
	}
	return append(dst, '}'), nil
}
