package reference

import (
	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// SurfaceItemKind says what a surface event projects to (conformance §8).
type SurfaceItemKind uint8

const (
	// ItemNone: the event projects to no conversation item (a tool
	// result, a user message from another source, an empty text).
	ItemNone SurfaceItemKind = iota
	// ItemUser: a user conversation item (direct input or a compaction
	// checkpoint).
	ItemUser
	// ItemAssistant: an assistant conversation item.
	ItemAssistant
	// ItemUnknown: the projection fails on the event (malformed content,
	// an unknown type); only a full read gives its error.
	ItemUnknown
)

// SurfaceItem is what retention needs to know of one surface event
// without its text: the item it projects to, the UTF-8 length of the
// text and the length of the text's tag-safe JSON string. A source keeps
// one per surface event (SurfaceItemOf, when it folds the event) so that
// RetainSummary can answer without reading the session again.
type SurfaceItem struct {
	Kind       SurfaceItemKind
	Checkpoint bool
	TextLen    int
	QuotedLen  int
}

// SurfaceItemOf projects one surface event like Retain does. The data is
// read through t, the tape of the record data lies in, when the caller
// has one (nil: by walking its bytes).
func SurfaceItemOf(typ string, data []byte, t *jsjson.Tape) SurfaceItem {
	var it projectedItem
	m := quoteMeter{tape: t}
	switch typ {
	case eventUserMessage:
		item, keep, err := projectUserMessage(t, data, m.measure)
		if err != nil {
			return SurfaceItem{Kind: ItemUnknown}
		}
		if !keep {
			return SurfaceItem{}
		}
		it = item
	case eventAssistantMessage:
		parts, n, err := assistantTextBlocks(t, data, m.measure)
		if err != nil {
			return SurfaceItem{Kind: ItemUnknown}
		}
		if n == 0 {
			return SurfaceItem{}
		}
		it = projectedItem{role: roleAssistant, parts: parts, textLen: n}
	case eventToolResult:
		return SurfaceItem{}
	default:
		return SurfaceItem{Kind: ItemUnknown}
	}
	kind := ItemUser
	if it.role == roleAssistant {
		kind = ItemAssistant
	}
	// The joined text's literal: each part's quotes but two become the
	// escaped "\n" separators, which cost as much.
	quoted := m.quoted
	if m.slow {
		quoted = jsjson.QuotedLen(it.text(), true)
	}
	return SurfaceItem{Kind: kind, Checkpoint: it.checkpoint, TextLen: it.textLen, QuotedLen: quoted}
}

// quoteMeter measures the text literals of one item for textBlocks with
// LiteralLens (the tape's, which counts the literals it holds without a
// walk), summing their tag-safe quoted lengths; slow is set when one
// needs the decoded text for that.
type quoteMeter struct {
	tape   *jsjson.Tape
	quoted int
	slow   bool
}

func (m *quoteMeter) measure(text []byte) (int, bool) {
	if n, q, ok := m.tape.LiteralLens(text); ok {
		m.quoted += q
		return n, true
	}
	m.slow = true
	return jsjson.StringLen(text)
}

// SurfaceSummary is a session's surface as retention sizes it: the
// header, the last seq read and one SurfaceItem per surface event, in
// surface order.
type SurfaceSummary struct {
	Header             SessionHeader
	CapturedThroughSeq *int64
	Items              []SurfaceItem
}

// RetainSummary gives what Retain(surface, label, maxBytes) would report
// for the surface s summarises — the statistics and the data object's
// size — when retention only drops items; ok is false when it would
// truncate a text or fail (that needs the texts: call Retain on the
// surface), or when an item's projection fails.
func RetainSummary(s *SurfaceSummary, label string, maxBytes int64) (stats RetentionStats, size int64, ok bool) {
	var items []projectedItem
	for _, it := range s.Items {
		switch it.Kind {
		case ItemUnknown:
			return RetentionStats{}, 0, false
		case ItemUser, ItemAssistant:
			role := roleUser
			if it.Kind == ItemAssistant {
				role = roleAssistant
			}
			items = append(items, projectedItem{role: role, textLen: it.TextLen, checkpoint: it.Checkpoint})
		}
	}
	surface := &Surface{Header: s.Header, CapturedThroughSeq: s.CapturedThroughSeq}
	r := newRetainer(surface, label, items, maxBytes)
	// The items are measured from the summary, never decoded.
	k := 0
	for _, it := range s.Items {
		if it.Kind == ItemUser || it.Kind == ItemAssistant {
			ri := &r.items[k]
			ri.measured, ri.tagSafeLen = true, it.QuotedLen
			k++
		}
	}
	r.drop()
	if r.size > r.budget {
		return RetentionStats{}, 0, false
	}
	return r.result().Stats, r.size, true
}
