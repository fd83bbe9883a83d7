package reference

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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
// retention.
type projectedItem struct {
	role string
	text string
	// checkpoint marks a compaction checkpoint: never dropped by retention.
	checkpoint bool
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
			item, keep, err := projectUserMessage(ev.Data)
			if err != nil {
				return nil, fmt.Errorf("session-reference projection: user/message seq %d: %w", ev.Seq, err)
			}
			if keep {
				items = append(items, item)
			}
		case eventAssistantMessage:
			text, err := joinTextBlocks(jsonObjectField(jsonObjectField(ev.Data, "message"), "content"))
			if err != nil {
				return nil, fmt.Errorf("session-reference projection: assistant/message seq %d: %w", ev.Seq, err)
			}
			if text != "" {
				items = append(items, projectedItem{role: roleAssistant, text: text})
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
func projectUserMessage(data []byte) (item projectedItem, keep bool, err error) {
	var source, content, envelope []byte
	if err := jsonMembers(data, func(key, value []byte) {
		switch {
		case jsonKeyIs(key, "source"):
			source = value
		case jsonKeyIs(key, "content"):
			content = value
		case jsonKeyIs(key, "envelope"):
			envelope = value
		}
	}); err != nil {
		return projectedItem{}, false, err
	}
	var kind, plugin []byte
	_ = jsonMembers(source, func(key, value []byte) { // a non-object source has no kind
		switch {
		case jsonKeyIs(key, "kind"):
			kind = value
		case jsonKeyIs(key, "plugin"):
			plugin = value
		}
	})
	kindText, _ := jsonString(kind)
	pluginText, _ := jsonString(plugin)
	checkpoint := kindText == "plugin" && pluginText == "compact"
	if !checkpoint && kindText != "user" {
		return projectedItem{}, false, nil
	}
	if display := jsonObjectField(envelope, "displayContent"); isJSONArray(display) {
		content = display
	}
	text, err := joinTextBlocks(content)
	if err != nil || text == "" {
		return projectedItem{}, false, err
	}
	return projectedItem{role: roleUser, text: text, checkpoint: checkpoint}, true, nil
}

func isJSONArray(b []byte) bool {
	i := jsonSkipSpace(b, 0)
	return i < len(b) && b[i] == '['
}

// joinTextBlocks joins the text of every {"type":"text","text":<string>}
// block of a content array with "\n". Empty texts still add a separator, as
// in dsh. A missing or non-array content gives "".
func joinTextBlocks(content []byte) (string, error) {
	var parts []string
	ok, err := jsonElements(content, func(block []byte) {
		var typ, text []byte
		if jsonMembers(block, func(key, value []byte) {
			switch {
			case jsonKeyIs(key, "type"):
				typ = value
			case jsonKeyIs(key, "text"):
				text = value
			}
		}) != nil {
			return // not an object: not a text block
		}
		if t, _ := jsonString(typ); t != "text" {
			return
		}
		if s, isString := jsonString(text); isString {
			parts = append(parts, s)
		}
	})
	if !ok || err != nil {
		return "", err
	}
	switch len(parts) {
	case 0:
		return "", nil
	case 1:
		return parts[0], nil
	}
	return strings.Join(parts, "\n"), nil
}

// unreachableEventError is dsh's internal error for a surface event of an
// unknown type. The event is quoted as compact JSON.
func unreachableEventError(ev *SurfaceEvent) error {
	raw := ev.Raw
	if len(raw) == 0 {
		raw, _ = json.Marshal(map[string]any{"type": ev.Type, "seq": ev.Seq, "data": ev.Data})
	}
	var compact bytes.Buffer
	if json.Compact(&compact, raw) == nil {
		raw = compact.Bytes()
	}
	return errors.New("unreachable variant in session-reference surface event: " + string(raw))
}
