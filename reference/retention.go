package reference

import (
	"strconv"
	"unicode/utf8"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// ConversationItem is one item of a data object's conversation.
type ConversationItem struct {
	// Role is "user" or "assistant".
	Role string
	// Text is the (possibly truncated) message text.
	Text string
}

// DataObject is the per-reference data object that goes into the prompt:
// {"sessionId","label","cwd","capturedThroughSeq","conversation"} in that
// key order (conformance §9).
type DataObject struct {
	SessionID          string
	Label              string
	CWD                *string
	CapturedThroughSeq *int64
	Conversation       []ConversationItem
}

// AppendJSON appends the tag-safe JSON serialization of d (JS
// JSON.stringify key order and escaping, every "<" as \u003c).
func (d *DataObject) AppendJSON(dst []byte) []byte {
	dst = d.appendHead(dst)
	for i, item := range d.Conversation {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendConversationItem(dst, item.Role, item.Text)
	}
	return append(dst, dataTail...)
}

// Size returns the UTF-8 byte length of d's tag-safe serialization, the
// figure the byte budget applies to.
func (d *DataObject) Size() int64 {
	n := int64(len(d.appendHead(nil)) + len(dataTail))
	for i, item := range d.Conversation {
		if i > 0 {
			n++
		}
		n += conversationItemSize(item.Role, jsjson.QuotedLen(item.Text, true))
	}
	return n
}

const dataTail = "]}"

// appendHead writes everything up to and including the conversation's "[".
func (d *DataObject) appendHead(dst []byte) []byte {
	dst = append(dst, `{"sessionId":`...)
	dst = jsjson.AppendJSString(dst, d.SessionID, true)
	dst = append(dst, `,"label":`...)
	dst = jsjson.AppendJSString(dst, d.Label, true)
	dst = append(dst, `,"cwd":`...)
	if d.CWD != nil {
		dst = jsjson.AppendJSString(dst, *d.CWD, true)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"capturedThroughSeq":`...)
	dst = appendIntOrNull(dst, d.CapturedThroughSeq)
	return append(dst, `,"conversation":[`...)
}

func appendConversationItem(dst []byte, role, text string) []byte {
	dst = append(dst, `{"role":`...)
	dst = jsjson.AppendJSString(dst, role, true)
	dst = append(dst, `,"text":`...)
	dst = jsjson.AppendJSString(dst, text, true)
	return append(dst, '}')
}

// conversationItemSize is len(appendConversationItem(nil, role, text)) given
// the text's tag-safe length: {"role":R,"text":T}.
func conversationItemSize(role string, textLen int) int64 {
	return int64(len(`{"role":`) + jsjson.QuotedLen(role, true) + len(`,"text":`) + textLen + len(`}`))
}

// RetentionStats describes what retention kept of one referenced session.
type RetentionStats struct {
	// Compacted tells whether any projected item was a compaction checkpoint.
	Compacted bool `json:"compacted"`
	// OriginalMessages and RetainedMessages count items before and after
	// the drop phase.
	OriginalMessages int `json:"originalMessages"`
	RetainedMessages int `json:"retainedMessages"`
	// OmittedMessages counts dropped items.
	OmittedMessages int `json:"omittedMessages"`
	// OmittedBytes is the UTF-8 size of dropped texts plus each kept item's
	// truncation omission.
	OmittedBytes int64 `json:"omittedBytes"`
	// Truncated is OmittedMessages > 0 || OmittedBytes > 0.
	Truncated bool `json:"truncated"`
}

// Retained is one referenced session after projection and retention.
type Retained struct {
	Data  DataObject
	Stats RetentionStats
}

// errBudgetExceeded is dsh's failure when a source cannot fit the budget.
func errBudgetExceeded() *Error {
	return newError(CodeBudgetExceeded, "referenced session snapshot cannot fit the configured byte budget", nil)
}

// Retain projects surface (conformance §8) and retains it to maxBytes
// (conformance §9), exactly as dsh retainReferencedSession does. The data
// object's sessionId is the surface header's id; label is the reference
// label. A source that cannot fit fails with CodeBudgetExceeded; an unknown
// surface event type fails with a plain internal error.
//
// Unlike dsh, which re-serializes the whole data object after every step,
// the size is kept as an incremental byte account, and items the drop
// phase removes are never decoded: retention costs one scan of the source
// plus work proportional to the budget (see retainer.drop).
func Retain(surface *Surface, label string, maxBytes int64) (*Retained, error) {
	items, err := projectSurface(surface)
	if err != nil {
		return nil, err
	}
	r := newRetainer(surface, label, items, maxBytes)
	if err := r.run(); err != nil {
		return nil, err
	}
	return r.result(), nil
}

// retainItem is one projected item during retention.
type retainItem struct {
	projectedItem
	dropped bool
	// measured is set once original, text and tagSafeLen are known. Items
	// the drop phase removes unseen are never decoded nor measured.
	measured bool
	original string
	text     string
	// tagSafeLen is jsjson.QuotedLen(text, true), kept to update the account.
	tagSafeLen int
	// omitted is the bytes the latest truncation of this item left out.
	omitted int64
}

// measure decodes the item and returns its serialized size.
func (it *retainItem) measure() int64 {
	if !it.measured {
		it.original = it.projectedItem.text()
		it.text = it.original
		it.tagSafeLen = jsjson.QuotedLen(it.text, true)
		it.measured = true
	}
	return conversationItemSize(it.role, it.tagSafeLen)
}

// retainer holds the state of one retention run. After the drop phase,
// size is an exact byte account of the data object (fixed part, items,
// commas), updated by every truncation instead of re-serializing.
type retainer struct {
	head   DataObject // everything but the conversation
	items  []retainItem
	live   int // items not dropped
	size   int64
	budget int64

	omittedMessages int
	droppedBytes    int64
	// step, when set (tests), is called after the drop phase and after
	// every truncation.
	step func()
}

func newRetainer(surface *Surface, label string, items []projectedItem, budget int64) *retainer {
	r := &retainer{
		head: DataObject{
			SessionID:          surface.Header.ID,
			Label:              label,
			CWD:                surface.Header.CWD,
			CapturedThroughSeq: surface.CapturedThroughSeq,
		},
		items:  make([]retainItem, len(items)),
		live:   len(items),
		budget: budget,
	}
	for i, it := range items {
		r.items[i] = retainItem{projectedItem: it}
	}
	return r
}

// run applies the drop phase then the truncate phase.
func (r *retainer) run() error {
	r.drop()
	if r.step != nil {
		r.step()
	}
	// Truncate phase: the item with the longest current text (earliest on
	// ties), cut from its original text to fit the overflow.
	for r.size > r.budget {
		best := -1
		for i := range r.items {
			if !r.items[i].dropped && (best < 0 || len(r.items[i].text) > len(r.items[best].text)) {
				best = i
			}
		}
		if best < 0 || len(r.items[best].text) == 0 {
			return errBudgetExceeded()
		}
		it := &r.items[best]
		overflow := r.size - r.budget
		target := max(0, int64(len(it.text))-overflow)
		text, omitted := truncateWithNotice(it.original, target)
		if text == it.text {
			return errBudgetExceeded()
		}
		n := jsjson.QuotedLen(text, true)
		r.size += int64(n - it.tagSafeLen)
		it.text, it.tagSafeLen, it.omitted = text, n, omitted
		if r.step != nil {
			r.step()
		}
	}
	return nil
}

// drop is dsh's drop phase: while the object is over budget, remove the
// oldest item that is neither a checkpoint nor the last item.
//
// dsh re-serializes the object after each removal. Here the sizes are summed
// from the newest end instead: the items that are always kept (checkpoints
// and the last item) plus the newest droppable items while the total fits.
// The dsh loop stops at exactly that point (the size after k removals is
// the sum over the newest D-k droppable items, which grows as k shrinks),
// so the older droppable items are dropped without ever being decoded or
// measured: the phase costs O(budget + checkpoints) bytes of work, not the
// whole source.
func (r *retainer) drop() {
	r.size = r.head.Size() // fixed part, "conversation":[] with no item
	n := len(r.items)
	if n == 0 {
		return
	}
	kept := 0 // items counted in size
	add := func(it *retainItem) {
		r.size += it.measure()
		if kept > 0 {
			r.size++ // comma
		}
		kept++
	}
	var droppable []int
	for i := range r.items[:n-1] {
		if r.items[i].checkpoint {
			add(&r.items[i])
		} else {
			droppable = append(droppable, i)
		}
	}
	add(&r.items[n-1])
	// Keep the newest droppable items while the total stays within budget.
	keepFrom := len(droppable)
	for keepFrom > 0 {
		it := &r.items[droppable[keepFrom-1]]
		if r.size+it.measure()+1 > r.budget {
			break
		}
		add(it)
		keepFrom--
	}
	if keepFrom == 0 {
		return // everything fits: nothing dropped
	}
	for _, i := range droppable[:keepFrom] {
		it := &r.items[i]
		it.dropped = true
		r.live--
		r.omittedMessages++
		r.droppedBytes += int64(it.textLen)
	}
}

// data returns the current data object.
func (r *retainer) data() DataObject {
	d := r.head
	d.Conversation = make([]ConversationItem, 0, r.live)
	for _, it := range r.items {
		if !it.dropped {
			d.Conversation = append(d.Conversation, ConversationItem{Role: it.role, Text: it.text})
		}
	}
	return d
}

func (r *retainer) result() *Retained {
	stats := RetentionStats{
		OriginalMessages: len(r.items),
		RetainedMessages: r.live,
		OmittedMessages:  r.omittedMessages,
		OmittedBytes:     r.droppedBytes,
	}
	for _, it := range r.items {
		stats.Compacted = stats.Compacted || it.checkpoint
		if !it.dropped {
			stats.OmittedBytes += it.omitted
		}
	}
	stats.Truncated = stats.OmittedMessages > 0 || stats.OmittedBytes > 0
	return &Retained{Data: r.data(), Stats: stats}
}

// truncateWithNotice is dsh's head/tail truncation of text to at most
// maxOut UTF-8 bytes (conformance §9.3): the largest retained byte count r
// found by binary search whose candidate head + tail + notice fits. It
// returns "" and the whole size when nothing fits.
func truncateWithNotice(text string, maxOut int64) (string, int64) {
	b := textEncoderBytes(text)
	total := int64(len(b))
	bestR := int64(-1)
	for low, high := int64(0), maxOut; low <= high; {
		r := (low + high) / 2
		h, t, omitted := headTailCut(b, r)
		if int64(keptLen(h)+keptLen(t))+noticeLen(omitted) <= maxOut {
			bestR = r
			low = r + 1
		} else {
			high = r - 1
		}
	}
	if bestR < 0 {
		return "", total
	}
	h, t, omitted := headTailCut(b, bestR)
	out := make([]byte, 0, keptLen(h)+keptLen(t)+int(noticeLen(omitted)))
	out = append(out, stripBOM(h)...)
	out = append(out, stripBOM(t)...)
	out = append(out, "\n[… omitted "...)
	out = strconv.AppendInt(out, omitted, 10)
	out = append(out, " UTF-8 bytes …]"...)
	return string(out), omitted
}

// noticeLen is the UTF-8 length of "\n[… omitted N UTF-8 bytes …]".
func noticeLen(n int64) int64 {
	digits := int64(1)
	for n >= 10 {
		n /= 10
		digits++
	}
	return 31 + digits
}

// headTailCut is TextRetainer headTail over the whole of b with head budget
// ceil(r/2) and tail budget floor(r/2) (dsh-session-format §10.4): the kept
// prefix cut back to a whole UTF-8 sequence, the kept suffix without leading
// continuation bytes, and the omitted byte count (before BOM stripping).
func headTailCut(b []byte, r int64) (head, tail []byte, omitted int64) {
	return headTail(b, (r+1)/2, r/2)
}

// headTail is TextRetainer headTail over the whole of b with the given head
// and tail byte budgets.
func headTail(b []byte, headBytes, tailBytes int64) (head, tail []byte, omitted int64) {
	total := int64(len(b))
	prefixLen := min(total, headBytes)
	suffixLen := min(total-prefixLen, tailBytes)
	if total-prefixLen-suffixLen == 0 {
		// Nothing trimmed: the whole text (never reached by retention,
		// whose target is always below the text size).
		return b, nil, 0
	}
	head = b[:prefixLen]
	if i := len(head) - 1; i >= 0 {
		cont := 0
		for i >= 0 && cont < 3 && head[i]&0xC0 == 0x80 {
			i--
			cont++
		}
		if i >= 0 {
			var expected int
			switch c := head[i]; {
			case c < 0x80:
				expected = 1
			case c < 0xE0:
				expected = 2
			case c < 0xF0:
				expected = 3
			case c < 0xF8:
				expected = 4
			}
			if expected > 0 && len(head)-i < expected {
				head = head[:i]
			}
		}
	}
	tail = b[total-suffixLen:]
	for len(tail) > 0 && tail[0]&0xC0 == 0x80 {
		tail = tail[1:]
	}
	return head, tail, total - int64(len(head)) - int64(len(tail))
}

const utf8BOM = "\uFEFF"

// stripBOM drops one leading U+FEFF, as the WHATWG decoder does.
func stripBOM(b []byte) []byte {
	if len(b) >= 3 && string(b[:3]) == utf8BOM {
		return b[3:]
	}
	return b
}

// keptLen is the decoded UTF-8 length of a kept part: its bytes minus a
// stripped BOM.
func keptLen(b []byte) int { return len(stripBOM(b)) }

// textEncoderBytes returns what JS TextEncoder produces for text: the UTF-8
// bytes, with each WTF-8 lone surrogate (and any other maximal ill-formed
// subpart) as U+FFFD.
// The common valid case returns the string's bytes without copying twice.
func textEncoderBytes(text string) []byte {
	if utf8.ValidString(text) {
		return []byte(text)
	}
	out := make([]byte, 0, len(text))
	for i := 0; i < len(text); {
		if _, ok := jsjson.SurrogateAt(text, i); ok {
			out = append(out, "\uFFFD"...)
			i += 3
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError && size == 1 {
			out = append(out, "\uFFFD"...)
			i += jsjson.InvalidLen(text, i)
			continue
		}
		out = append(out, text[i:i+size]...)
		i += size
	}
	return out
}
