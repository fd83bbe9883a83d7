package reference

import (
	"bytes"
	"unicode/utf8"

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

// SurfaceItemOf projects one surface event like Retain does.
func SurfaceItemOf(typ string, data []byte) SurfaceItem {
	var it projectedItem
	switch typ {
	case eventUserMessage:
		item, keep, err := projectUserMessage(data)
		if err != nil {
			return SurfaceItem{Kind: ItemUnknown}
		}
		if !keep {
			return SurfaceItem{}
		}
		it = item
	case eventAssistantMessage:
		parts, n, err := textBlocks(jsjson.ObjectField(jsjson.ObjectField(data, "message"), "content"))
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
	return SurfaceItem{Kind: kind, Checkpoint: it.checkpoint, TextLen: it.textLen, QuotedLen: quotedLenOf(&it)}
}

// quotedLenOf is jsjson.QuotedLen(it.text(), true) computed from the raw
// literals without decoding them when they are valid UTF-8 and use no
// \u escape: every other character is written back as it is (JSON
// literals hold no raw control characters), "<" as \u003c, a short
// escape as the same two bytes except \/ (written as "/"), and each
// "\n" joining two parts as two bytes. Indexing sizes every message of a
// store this way.
func quotedLenOf(it *projectedItem) int {
	n := 2
	for i, p := range it.parts {
		body := p[1 : len(p)-1]
		if !utf8.Valid(body) {
			return jsjson.QuotedLen(it.text(), true)
		}
		if i > 0 {
			n += 2
		}
		if !bytes.Contains(body, []byte(`\\`)) {
			// No escaped backslash: every escape starts a two-byte pair,
			// so counting is exact (and vectorised).
			if bytes.Contains(body, []byte(`\u`)) {
				return jsjson.QuotedLen(it.text(), true)
			}
			n += len(body) + 5*bytes.Count(body, []byte("<")) - bytes.Count(body, []byte(`\/`))
			continue
		}
		for j := 0; j < len(body); j++ {
			switch body[j] {
			case '<':
				n += 6
			case '\\':
				j++
				switch body[j] {
				case 'u':
					return jsjson.QuotedLen(it.text(), true)
				case '/':
					n++
				default: // \" \\ \b \f \n \r \t
					n += 2
				}
			default:
				n++
			}
		}
	}
	return n
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
