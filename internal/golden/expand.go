package golden

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// BuildLog returns the logical JSONL text (header line plus one event per
// line) that dsh's persistence writes for s, expanding the event
// shorthands of golden/README.md. Entry i becomes the event with seq i.
// Message ids and times are deterministic (dsh would use random UUIDs and
// wall-clock times; no golden output depends on them).
func BuildLog(s Session) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(`{"type":"session","version":0,"id":`)
	buf.Write(jsjson.AppendJSString(nil, s.ID, false))
	buf.WriteString(`,"createdAt":`)
	buf.WriteString(strconv.FormatInt(s.CreatedAt, 10))
	if s.CWD != nil {
		buf.WriteString(`,"cwd":`)
		buf.Write(jsjson.AppendJSString(nil, *s.CWD, false))
	}
	buf.WriteString(`,"delegationDepth":0}` + "\n")
	var nodes []int64
	for i, raw := range s.Events {
		seq := int64(i)
		ev, err := expandEvent(s, seq, raw, &nodes)
		if err != nil {
			return nil, fmt.Errorf("event %d: %w", i, err)
		}
		buf.Write(ev)
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}

// shorthand is the union of the event shorthand fields.
type shorthand struct {
	User         json.RawMessage `json:"user"`
	Checkpoint   *string         `json:"checkpoint"`
	CompactionID *string         `json:"compactionId"`
	Plugin       *string         `json:"plugin"`
	PluginName   *string         `json:"pluginName"`
	Injected     *string         `json:"injected"`
	UserSource   json.RawMessage `json:"userSource"`
	Content      json.RawMessage `json:"content"`
	Assistant    json.RawMessage `json:"assistant"`
	Turn         json.RawMessage `json:"turn"`
	Step         json.RawMessage `json:"step"`
	Tool         *string         `json:"tool"`
	CallID       *string         `json:"callId"`
	Title        json.RawMessage `json:"title"`
	Chunk        *string         `json:"chunk"`
	Replace      []int64         `json:"replace"`

	Type            *string         `json:"type"`
	Data            json.RawMessage `json:"data"`
	SurfaceOp       json.RawMessage `json:"surfaceOp"`
	SourceEventSeqs json.RawMessage `json:"sourceEventSeqs"`
}

// jsonValue encodes v as dsh writes it (compact, no HTML escaping).
func jsonValue(v any) []byte {
	b, err := jsjson.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// content turns a text-or-blocks shorthand into a content array.
func content(v json.RawMessage) ([]byte, error) {
	v = bytes.TrimSpace(v)
	if len(v) > 0 && v[0] == '"' {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, err
		}
		return textBlocks(s), nil
	}
	if len(v) > 0 && v[0] == '[' {
		var c bytes.Buffer
		if err := json.Compact(&c, v); err != nil {
			return nil, err
		}
		return c.Bytes(), nil
	}
	return nil, fmt.Errorf("content is neither text nor blocks: %s", v)
}

func textBlocks(s string) []byte {
	return []byte(`[` + string(jsjson.NewObject(nil).Raw("type", []byte(`"text"`)).String("text", s).Bytes()) + `]`)
}

func orDefault(v json.RawMessage, def string) []byte {
	if len(bytes.TrimSpace(v)) == 0 {
		return []byte(def)
	}
	var c bytes.Buffer
	if json.Compact(&c, v) != nil {
		return []byte(def)
	}
	return c.Bytes()
}

func expandEvent(s Session, seq int64, raw json.RawMessage, nodes *[]int64) ([]byte, error) {
	var sh shorthand
	if err := json.Unmarshal(raw, &sh); err != nil {
		return nil, err
	}
	msgID := jsjson.AppendJSString(nil, fmt.Sprintf("golden-%s-%d", s.ID, seq), false)
	userMessage := func(c, source []byte) []byte {
		return jsjson.NewObject(nil).Raw("content", c).Raw("source", source).Raw("role", []byte(`"user"`)).Raw("id", msgID).Bytes()
	}
	turn, step := orDefault(sh.Turn, "1"), orDefault(sh.Step, "1")
	var typ string
	var data []byte
	switch {
	case sh.Type != nil:
		typ = *sh.Type
		data = orDefault(sh.Data, "{}")
	case sh.User != nil:
		c, err := content(sh.User)
		if err != nil {
			return nil, err
		}
		typ, data = "user/message", userMessage(c, []byte(`{"kind":"user"}`))
	case sh.Checkpoint != nil:
		src := jsjson.NewObject(nil).Raw("kind", []byte(`"plugin"`)).Raw("plugin", []byte(`"compact"`))
		if sh.CompactionID != nil {
			src.String("compactionId", *sh.CompactionID)
		}
		typ, data = "user/message", userMessage(textBlocks(*sh.Checkpoint), src.Bytes())
	case sh.Plugin != nil:
		name := "plugin"
		if sh.PluginName != nil {
			name = *sh.PluginName
		}
		src := jsjson.NewObject(nil).Raw("kind", []byte(`"plugin"`)).String("plugin", name).Bytes()
		typ, data = "user/message", userMessage(textBlocks(*sh.Plugin), src)
	case sh.Injected != nil:
		src := []byte(`{"kind":"session-reference","form":"recall","version":1,"references":[]}`)
		typ, data = "user/message", userMessage(textBlocks(*sh.Injected), src)
	case sh.UserSource != nil:
		c, err := content(sh.Content)
		if err != nil {
			return nil, err
		}
		typ, data = "user/message", userMessage(c, orDefault(sh.UserSource, "{}"))
	case sh.Assistant != nil:
		c, err := content(sh.Assistant)
		if err != nil {
			return nil, err
		}
		msg := jsjson.NewObject(nil).Raw("role", []byte(`"assistant"`)).Raw("content", c).
			Raw("source", []byte(`{"kind":"model","provider":"mock","model":"mock"}`)).Raw("id", msgID).Bytes()
		typ, data = "assistant/message", jsjson.NewObject(nil).Raw("turn", turn).Raw("step", step).Raw("message", msg).Bytes()
	case sh.Tool != nil:
		callID := "call"
		if sh.CallID != nil {
			callID = *sh.CallID
		}
		cid := jsjson.AppendJSString(nil, callID, false)
		block := jsjson.NewObject(nil).Raw("type", []byte(`"tool-result"`)).Raw("toolCallId", cid).
			Raw("content", textBlocks(*sh.Tool)).Raw("isError", []byte("false")).Bytes()
		msg := jsjson.NewObject(nil).Raw("source", jsjson.NewObject(nil).Raw("kind", []byte(`"tool"`)).Raw("callId", cid).Bytes()).
			Raw("content", []byte("["+string(block)+"]")).Raw("role", []byte(`"user"`)).Raw("id", msgID).Bytes()
		typ, data = "tool/result", jsjson.NewObject(nil).Raw("turn", turn).Raw("step", step).Raw("message", msg).Bytes()
	case sh.Title != nil:
		typ = "session/title"
		data = jsjson.NewObject(nil).Raw("title", orDefault(sh.Title, `""`)).Raw("messageSeqs", []byte("[]")).
			Raw("source", []byte(`{"kind":"fallback"}`)).Bytes()
	case sh.Chunk != nil:
		chunk := jsjson.NewObject(nil).Raw("type", []byte(`"text-delta"`)).Raw("index", []byte("0")).String("text", *sh.Chunk).Bytes()
		typ, data = "assistant/chunk", jsjson.NewObject(nil).Raw("turn", turn).Raw("step", step).Raw("chunk", chunk).Bytes()
	default:
		return nil, fmt.Errorf("unknown event shorthand %s", raw)
	}
	ev := jsjson.NewObject(nil).String("type", typ).Raw("seq", []byte(strconv.FormatInt(seq, 10))).
		Raw("time", []byte(strconv.FormatInt(s.CreatedAt+seq+1, 10))).Raw("data", data)
	surface := typ == "user/message" || typ == "assistant/message" || typ == "tool/result"
	switch {
	case sh.Replace != nil:
		if len(sh.Replace) != 2 {
			return nil, fmt.Errorf("replace must be [start, end]")
		}
		si, ei := index(*nodes, sh.Replace[0]), index(*nodes, sh.Replace[1])
		if si < 0 || ei < 0 || si > ei {
			return nil, fmt.Errorf("replace %v does not name a surface span of %v", sh.Replace, *nodes)
		}
		shadowed := append([]int64(nil), (*nodes)[si:ei+1]...)
		*nodes = append((*nodes)[:si], append([]int64{seq}, (*nodes)[ei+1:]...)...)
		ev.Raw("sourceEventSeqs", jsonValue(shadowed))
		ev.Raw("surfaceOp", []byte(fmt.Sprintf(`{"op":"replace","start":%d,"end":%d}`, sh.Replace[0], sh.Replace[1])))
	case sh.SurfaceOp != nil || sh.SourceEventSeqs != nil:
		if sh.SourceEventSeqs != nil {
			ev.Raw("sourceEventSeqs", orDefault(sh.SourceEventSeqs, "[]"))
		}
		if sh.SurfaceOp != nil {
			ev.Raw("surfaceOp", orDefault(sh.SurfaceOp, `"append"`))
			if bytes.Equal(orDefault(sh.SurfaceOp, ""), []byte(`"append"`)) {
				*nodes = append(*nodes, seq)
			}
		} else if surface {
			ev.Raw("surfaceOp", []byte(`"append"`))
			*nodes = append(*nodes, seq)
		}
	case surface:
		ev.Raw("surfaceOp", []byte(`"append"`))
		*nodes = append(*nodes, seq)
	}
	return ev.Bytes(), nil
}

func index(nodes []int64, seq int64) int {
	for i, n := range nodes {
		if n == seq {
			return i
		}
	}
	return -1
}
