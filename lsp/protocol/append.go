package protocol

import (
	"strconv"
	"unicode/utf8"
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
	dst = AppendString(dst, it.Label)
	if it.Kind != 0 {
		dst = append(dst, `,"kind":`...)
		dst = strconv.AppendInt(dst, int64(it.Kind), 10)
	}
	field := func(name, v string) {
		if v != "" {
			dst = append(dst, `,"`...)
			dst = append(dst, name...)
			dst = append(dst, `":`...)
			dst = AppendString(dst, v)
		}
	}
	field("detail", it.Detail)
	if it.Documentation != nil {
		dst = append(dst, `,"documentation":{"kind":`...)
		dst = AppendString(dst, it.Documentation.Kind)
		dst = append(dst, `,"value":`...)
		dst = AppendString(dst, it.Documentation.Value)
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
	dst = te.Range.appendJSON(dst)
	dst = append(dst, `,"newText":`...)
	dst = AppendString(dst, te.NewText)
	return append(dst, '}')
}

func (r Range) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"start":`...)
	dst = r.Start.appendJSON(dst)
	dst = append(dst, `,"end":`...)
	dst = r.End.appendJSON(dst)
	return append(dst, '}')
}

func (p Position) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"line":`...)
	dst = strconv.AppendUint(dst, uint64(p.Line), 10)
	dst = append(dst, `,"character":`...)
	dst = strconv.AppendUint(dst, uint64(p.Character), 10)
	return append(dst, '}')
}

const hex = "0123456789abcdef"

// AppendString appends s as a JSON string: `"` and `\` escaped, control
// characters as \n, \r, \t or \u00XX, invalid UTF-8 as U+FFFD, nothing
// HTML-escaped.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\ufffd"...)
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
