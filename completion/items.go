package completion

import (
	"bytes"
	"strings"
	"unsafe"

	"github.com/dsh-lsp/dsh-lsp/lsp/position"
	"github.com/dsh-lsp/dsh-lsp/lsp/wire"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// ItemsStyled is Items with a client-specific shape.
func ItemsStyled(cands []reference.Candidate, q Query, m *position.Mapper, style Style) []wire.CompletionItem {
	c := newComposer(len(cands), q, m, style)
	items := make([]wire.CompletionItem, len(cands))
	for i := range cands {
		c.compose(&items[i], i, &cands[i])
		items[i] = detach(&items[i])
	}
	return items
}

// AppendList appends the JSON of the incomplete completion list whose items
// are ItemsStyled(cands, q, m, style) followed by extra: the bytes
// wire.CompletionList.AppendJSON writes for that list, without building
// the items. This runs for every keystroke of a mention query, so its
// garbage is the server's: each item is composed in a scratch buffer and
// written from there.
func AppendList(dst []byte, cands []reference.Candidate, q Query, m *position.Mapper, style Style, extra []wire.CompletionItem) []byte {
	dst = append(dst, `{"isIncomplete":true,"items":[`...)
	c := newComposer(len(cands), q, m, style)
	var it wire.CompletionItem
	for i := range cands {
		if i > 0 {
			dst = append(dst, ',')
		}
		c.compose(&it, i, &cands[i])
		dst = it.AppendJSON(dst)
	}
	for i := range extra {
		if i > 0 || len(cands) > 0 {
			dst = append(dst, ',')
		}
		dst = extra[i].AppendJSON(dst)
	}
	return append(dst, "]}"...)
}

// composer makes the completion items of one answer (see Items). An item's
// strings and data are views of its scratch buffer, valid until the next
// compose: ItemsStyled copies them (detach), AppendList writes them out.
type composer struct {
	q     Query
	rng   position.Range
	style Style
	// width is the digits of a sort text: dsh's order survives a client's
	// lexicographic sort.
	width   int
	scratch []byte
	edit    wire.TextEdit
	ale     [1]wire.TextEdit
}

func newComposer(n int, q Query, m *position.Mapper, style Style) *composer {
	width := max(len(itoa(nil, n, 0)), 4)
	return &composer{q: q, rng: m.Range(q.Start, q.End), style: style, width: width}
}

// compose sets *it to the item of candidate c, the i-th of the answer.
func (c *composer) compose(it *wire.CompletionItem, i int, cand *reference.Candidate) {
	label := InsertLabel(cand.Label)
	visible := Shorten(VisibleLabel(cand.Label))
	b := c.scratch[:0]
	// Offsets first: appending may move the buffer.
	mention := len(b)
	b = reference.AppendMention(b, cand.SessionID, &label)
	detail := len(b)
	b = appendDetail(b, cand.CWD, cand.CreatedAt)
	sortText := len(b)
	b = itoa(b, i, c.width)
	filterText := len(b)
	b = append(append(b, c.q.Text...), visible...)
	data := len(b)
	b = cand.AppendJSON(b)
	c.scratch = b
	newText := view(b[mention+len("@") : detail])
	*it = wire.CompletionItem{
		Label:      visible,
		Kind:       wire.CompletionItemKindReference,
		Detail:     view(b[detail:sortText]),
		SortText:   view(b[sortText:filterText]),
		FilterText: view(b[filterText:data]),
		InsertText: newText,
		Data:       b[data:len(b):len(b)],
	}
	c.edit = wire.TextEdit{Range: c.rng, NewText: newText}
	it.TextEdit = &c.edit
	if c.style == StyleALE {
		cut := strings.IndexByte(newText, '(')
		word, rest := newText[:cut], newText[cut:]
		it.InsertText = word
		c.edit.NewText = word
		at := c.rng.Start
		at.Character += uint32(len(word)) // ALE columns are bytes
		c.ale[0] = wire.TextEdit{Range: position.Range{Start: at, End: at}, NewText: rest}
		it.AdditionalTextEdits = c.ale[:]
	}
}

// view is b as a string without a copy: the composer's items are written
// out (or detached) before their scratch bytes change.
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// detach copies a composed item out of the composer's scratch.
func detach(it *wire.CompletionItem) wire.CompletionItem {
	out := *it
	out.Detail = strings.Clone(it.Detail)
	out.SortText = strings.Clone(it.SortText)
	out.FilterText = strings.Clone(it.FilterText)
	out.InsertText = strings.Clone(it.InsertText)
	out.Data = bytes.Clone(it.Data)
	edit := *it.TextEdit
	edit.NewText = strings.Clone(edit.NewText)
	out.TextEdit = &edit
	if it.AdditionalTextEdits != nil {
		out.AdditionalTextEdits = []wire.TextEdit{it.AdditionalTextEdits[0]}
		out.AdditionalTextEdits[0].NewText = strings.Clone(it.AdditionalTextEdits[0].NewText)
	}
	return out
}

// itoa appends n in decimal, zero-padded to width digits.
func itoa(dst []byte, n, width int) []byte {
	var digits [20]byte
	i := len(digits)
	for {
		i--
		digits[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	for range width - (len(digits) - i) {
		dst = append(dst, '0')
	}
	return append(dst, digits[i:]...)
}
