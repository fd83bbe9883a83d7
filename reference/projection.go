package reference

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// Surface event types the projection knows (conformance §8).
const (
	eventUserMessage      = "user/message"
	eventAssistantMessage = "assistant/message"
	eventToolResult       = "tool/result"
)

// Conversation roles in a data object.
const (
	roleUser      = "user"
	roleAssistant = "assistant"
)

// projectedItem is one conversation item of a referenced session before
// retention. Its text is kept undecoded (the raw JSON string literals of its
// text blocks, pointing into the event data) with its decoded length:
// retention decodes only the items it keeps, which for a large source is a
// small fraction of the log.
type projectedItem struct {
	role string
	// parts are the raw JSON string literals of the text blocks.
	parts [][]byte
	// textLen is the UTF-8 length of the joined decoded text, separators
	// included (equal to what JS TextEncoder counts).
	textLen int
	// checkpoint marks a compaction checkpoint: never dropped by retention.
	checkpoint bool
}

// text decodes the item's text: the block texts joined with "\n".
func (it *projectedItem) text() string {
	if len(it.parts) == 1 {
		s, _ := jsjson.String(it.parts[0])
		return s
	}
	buf := make([]byte, 0, it.textLen)
	for i, part := range it.parts {
		if i > 0 {
			buf = append(buf, '\n')
		}
		s, _ := jsjson.String(part)
		buf = append(buf, s...)
	}
	return string(buf)
}

// projectSurface turns a surface into conversation items (conformance §8):
// direct user messages (source kind "user"), compaction checkpoints (source
// kind "plugin", plugin "compact") and assistant messages are kept with the
// text of their text blocks joined by "\n"; tool results and every other
// user message source are dropped, as are items whose joined text is empty.
//
// Deliberate difference from dsh 0.1.0-rc.8 (CONTRACT.md): a legacy
// user/message whose data carries envelope.displayContent (an array of
// blocks, July-2026 baked prefix context) projects displayContent instead of
// content, so a snapshot never re-embeds an older snapshot.
//
// Any other event type is an internal error with dsh's message.
func projectSurface(s *Surface) ([]projectedItem, error) {
	items := make([]projectedItem, 0, len(s.Events))
	for i := range s.Events {
		ev := &s.Events[i]
		switch ev.Type {
		case eventUserMessage:
			item, keep, err := projectUserMessage(nil, ev.Data, jsjson.StringLen)
			if err != nil {
				return nil, fmt.Errorf("session-reference projection: user/message seq %d: %w", ev.Seq, err)
			}
			if keep {
				items = append(items, item)
			}
		case eventAssistantMessage:
			parts, n, err := assistantTextBlocks(nil, ev.Data, jsjson.StringLen)
			if err != nil {
				return nil, fmt.Errorf("session-reference projection: assistant/message seq %d: %w", ev.Seq, err)
			}
			if n > 0 {
				items = append(items, projectedItem{role: roleAssistant, parts: parts, textLen: n})
			}
		case eventToolResult:
			// Tool output is never part of a reference snapshot.
		default:
			return nil, unreachableEventError(ev)
		}
	}
	return items, nil
}

// projectUserMessage projects one user/message data object. keep is false
// for sources other than direct user input and compaction checkpoints, and
// for an empty joined text.
func projectUserMessage(t *jsjson.Tape, data []byte, measure func(text []byte) (int, bool)) (item projectedItem, keep bool, err error) {
	var source, content, envelope []byte
	if err := t.Members(data, func(key, value []byte) {
		switch {
		case jsjson.KeyIs(key, "source"):
			source = value
		case jsjson.KeyIs(key, "content"):
			content = value
		case jsjson.KeyIs(key, "envelope"):
			envelope = value
		}
	}); err != nil {
		return projectedItem{}, false, err
	}
	var kind, plugin []byte
	_ = t.Members(source, func(key, value []byte) { // a non-object source has no kind
		switch {
		case jsjson.KeyIs(key, "kind"):
			kind = value
		case jsjson.KeyIs(key, "plugin"):
			plugin = value
		}
	})
	checkpoint := jsjson.KeyIs(kind, "plugin") && jsjson.KeyIs(plugin, "compact")
	if !checkpoint && !jsjson.KeyIs(kind, "user") {
		return projectedItem{}, false, nil
	}
	if display := t.ObjectField(envelope, "displayContent"); isJSONArray(display) {
		content = display
	}
	parts, n, err := textBlocks(t, content, measure)
	if err != nil || n == 0 {
		return projectedItem{}, false, err
	}
	return projectedItem{role: roleUser, parts: parts, textLen: n, checkpoint: checkpoint}, true, nil
}

func isJSONArray(b []byte) bool {
	i := jsjson.SkipSpace(b, 0)
	return i < len(b) && b[i] == '['
}

// assistantTextBlocks is textBlocks of an assistant/message's
// data.message.content.
func assistantTextBlocks(t *jsjson.Tape, data []byte, measure func(text []byte) (int, bool)) (parts [][]byte, n int, err error) {
	return textBlocks(t, t.ObjectField(t.ObjectField(data, "message"), "content"), measure)
}

// textBlocks returns the raw text literals of every
// {"type":"text","text":<string>} block of a content array and the UTF-8
// length of their decoded texts joined with "\n". Empty texts still add a
// separator, as in dsh: the joined text is empty only when n is 0. A
// missing or non-array content has no text. measure is jsjson.StringLen or
// one that gives its answers: a text it says is not a string is not one.
// The JSON is read through t (nil: by walking its bytes).
func textBlocks(t *jsjson.Tape, content []byte, measure func(text []byte) (int, bool)) (parts [][]byte, n int, err error) {
	ok, err := t.Elements(content, func(block []byte) {
		var typ, text []byte
		if t.Members(block, func(key, value []byte) {
			switch {
			case jsjson.KeyIs(key, "type"):
				typ = value
			case jsjson.KeyIs(key, "text"):
				text = value
			}
		}) != nil {
			return // not an object: not a text block
		}
		if !jsjson.KeyIs(typ, "text") {
			return
		}
		if size, isString := measure(text); isString {
			if len(parts) > 0 {
				n++ // the "\n" separator
			}
			parts = append(parts, text)
			n += size
		}
	})
	if !ok || err != nil {
		return nil, 0, err
	}
	return parts, n, nil
}

// unreachableEventError is dsh's internal error for a surface event of an
// unknown type. The event is quoted as JS JSON.stringify writes it.
func unreachableEventError(ev *SurfaceEvent) error {
	raw := []byte(ev.Raw)
	if len(raw) == 0 {
		raw, _ = json.Marshal(map[string]any{"type": ev.Type, "seq": ev.Seq, "data": ev.Data})
	}
	if v, err := jsjson.Parse(jsjson.RepairUTF8(raw)); err == nil {
		raw = jsjson.AppendValue(nil, v, false)
	}
	return errors.New("unreachable variant in session-reference surface event: " + string(raw))
}
