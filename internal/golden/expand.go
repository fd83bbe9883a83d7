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
	buf.Write(jsString(s.ID))
	buf.WriteString(`,"createdAt":`)
	buf.WriteString(strconv.FormatInt(s.CreatedAt, 10))
	if s.CWD != nil {
		buf.WriteString(`,"cwd":`)
		buf.Write(jsString(*s.CWD))
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

// jsString quotes s as JS JSON.stringify does (lone surrogates held as
// WTF-8 are written back as \udxxx escapes).
func jsString(s string) []byte { return jsjson.AppendJSString(nil, s, false) }

func jsonValue(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// obj builds a JSON object in key order.
type obj struct{ b []byte }

func (o *obj) add(k string, v []byte) *obj {
	if len(o.b) == 0 {
		o.b = append(o.b, '{')
	} else {
		o.b = append(o.b, ',')
	}
	o.b = append(o.b, jsString(k)...)
	o.b = append(o.b, ':')
	o.b = append(o.b, v...)
	return o
}

func (o *obj) bytes() []byte {
	if len(o.b) == 0 {
		return []byte("{}")
	}
	return append(o.b, '}')
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
	return []byte(`[` + string((&obj{}).add("type", []byte(`"text"`)).add("text", jsString(s)).bytes()) + `]`)
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
	msgID := jsString(fmt.Sprintf("golden-%s-%d", s.ID, seq))
	userMessage := func(c, source []byte) []byte {
		return (&obj{}).add("content", c).add("source", source).add("role", []byte(`"user"`)).add("id", msgID).bytes()
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
		src := (&obj{}).add("kind", []byte(`"plugin"`)).add("plugin", []byte(`"compact"`))
		if sh.CompactionID != nil {
			src.add("compactionId", jsString(*sh.CompactionID))
		}
		typ, data = "user/message", userMessage(textBlocks(*sh.Checkpoint), src.bytes())
	case sh.Plugin != nil:
		name := "plugin"
		if sh.PluginName != nil {
			name = *sh.PluginName
		}
		src := (&obj{}).add("kind", []byte(`"plugin"`)).add("plugin", jsString(name)).bytes()
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
		msg := (&obj{}).add("role", []byte(`"assistant"`)).add("content", c).
			add("source", []byte(`{"kind":"model","provider":"mock","model":"mock"}`)).add("id", msgID).bytes()
		typ, data = "assistant/message", (&obj{}).add("turn", turn).add("step", step).add("message", msg).bytes()
	case sh.Tool != nil:
		callID := "call"
		if sh.CallID != nil {
			callID = *sh.CallID
		}
		cid := jsString(callID)
		block := (&obj{}).add("type", []byte(`"tool-result"`)).add("toolCallId", cid).
			add("content", textBlocks(*sh.Tool)).add("isError", []byte("false")).bytes()
		msg := (&obj{}).add("source", (&obj{}).add("kind", []byte(`"tool"`)).add("callId", cid).bytes()).
			add("content", []byte("["+string(block)+"]")).add("role", []byte(`"user"`)).add("id", msgID).bytes()
		typ, data = "tool/result", (&obj{}).add("turn", turn).add("step", step).add("message", msg).bytes()
	case sh.Title != nil:
		typ = "session/title"
		data = (&obj{}).add("title", orDefault(sh.Title, `""`)).add("messageSeqs", []byte("[]")).
			add("source", []byte(`{"kind":"fallback"}`)).bytes()
	case sh.Chunk != nil:
		chunk := (&obj{}).add("type", []byte(`"text-delta"`)).add("index", []byte("0")).add("text", jsString(*sh.Chunk)).bytes()
		typ, data = "assistant/chunk", (&obj{}).add("turn", turn).add("step", step).add("chunk", chunk).bytes()
	default:
		return nil, fmt.Errorf("unknown event shorthand %s", raw)
	}
	ev := (&obj{}).add("type", jsString(typ)).add("seq", []byte(strconv.FormatInt(seq, 10))).
		add("time", []byte(strconv.FormatInt(s.CreatedAt+seq+1, 10))).add("data", data)
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
		ev.add("sourceEventSeqs", jsonValue(shadowed))
		ev.add("surfaceOp", []byte(fmt.Sprintf(`{"op":"replace","start":%d,"end":%d}`, sh.Replace[0], sh.Replace[1])))
	case sh.SurfaceOp != nil || sh.SourceEventSeqs != nil:
		if sh.SourceEventSeqs != nil {
			ev.add("sourceEventSeqs", orDefault(sh.SourceEventSeqs, "[]"))
		}
		if sh.SurfaceOp != nil {
			ev.add("surfaceOp", orDefault(sh.SurfaceOp, `"append"`))
			if bytes.Equal(orDefault(sh.SurfaceOp, ""), []byte(`"append"`)) {
				*nodes = append(*nodes, seq)
			}
		} else if surface {
			ev.add("surfaceOp", []byte(`"append"`))
			*nodes = append(*nodes, seq)
		}
	case surface:
		ev.add("surfaceOp", []byte(`"append"`))
		*nodes = append(*nodes, seq)
	}
	return ev.bytes(), nil
}

func index(nodes []int64, seq int64) int {
	for i, n := range nodes {
		if n == seq {
			return i
		}
	}
	return -1
}
