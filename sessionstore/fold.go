package sessionstore

import (
	"encoding/json"
	"reflect"
)

// Replacement records one replace operation of the fold.
type Replacement struct {
	Seq, Start, End int64
	// Shadowed are the surface nodes the replace removed, in surface order.
	Shadowed []int64
}

// foldSurface runs dsh's foldSurface (spec §5.1) over events (seq ==
// index) and returns the surface nodes (seqs in surface order).
func foldSurface(events []Event) ([]int64, []Replacement, error) {
	var nodes []int64
	var reps []Replacement
	for i := range events {
		e := &events[i]
		if !isSurfaceType(e.Type) {
			if e.SurfaceOp != nil || e.SourceEventSeqs != nil {
				return nil, nil, corruptf("event %d: log-only %s carries a surface marker", e.Seq, e.Type)
			}
			continue
		}
		var seqs []int64
		if e.SourceEventSeqs != nil {
			var ok bool
			seqs, ok = parseSeqList(e.SourceEventSeqs)
			if !ok {
				return nil, nil, corruptf("event %d: sourceEventSeqs is not an array of non-negative safe integers", e.Seq)
			}
			if len(seqs) == 0 && e.Type != "assistant/message" {
				return nil, nil, corruptf("event %d: empty sourceEventSeqs", e.Seq)
			}
			seen := map[int64]bool{}
			for _, s := range seqs {
				if s >= e.Seq {
					return nil, nil, corruptf("event %d: sourceEventSeqs cites seq %d, not earlier", e.Seq, s)
				}
				if seen[s] {
					return nil, nil, corruptf("event %d: sourceEventSeqs repeats seq %d", e.Seq, s)
				}
				seen[s] = true
			}
		}
		if e.SurfaceOp == nil {
			return nil, nil, corruptf("event %d: %s has no surfaceOp", e.Seq, e.Type)
		}
		if string(compact(e.SurfaceOp)) == `"append"` {
			nodes = append(nodes, e.Seq)
			continue
		}
		op, ok := parseObject(e.SurfaceOp)
		opName, _ := str(op["op"])
		start, okS := nonNegSafeInt(op["start"])
		end, okE := nonNegSafeInt(op["end"])
		if !ok || !hasExactKeys(op, "op", "start", "end") || opName != "replace" || !okS || !okE {
			return nil, nil, corruptf("event %d: invalid surfaceOp %s", e.Seq, string(compact(e.SurfaceOp)))
		}
		si, ei := indexOf(nodes, start), indexOf(nodes, end)
		if si < 0 || ei < 0 || si > ei {
			return nil, nil, corruptf("event %d: replace {start:%d,end:%d} does not name a surface span", e.Seq, start, end)
		}
		shadowed := append([]int64(nil), nodes[si:ei+1]...)
		cited := map[int64]bool{}
		for _, s := range seqs {
			cited[s] = true
		}
		for _, s := range shadowed {
			if !cited[s] {
				return nil, nil, corruptf("event %d: replace shadows seq %d without citing it in sourceEventSeqs", e.Seq, s)
			}
		}
		if e.Type == "tool/result" {
			if len(shadowed) != 1 || events[shadowed[0]].Type != "tool/result" {
				return nil, nil, corruptf("event %d: a replacing tool/result must shadow exactly one tool/result", e.Seq)
			}
			if !sameExceptResultContent(events[shadowed[0]].Data, e.Data) {
				return nil, nil, corruptf("event %d: a replacing tool/result may only change the result content", e.Seq)
			}
		}
		nodes = append(nodes[:si], append([]int64{e.Seq}, nodes[ei+1:]...)...)
		reps = append(reps, Replacement{Seq: e.Seq, Start: start, End: end, Shadowed: shadowed})
	}
	return nodes, reps, nil
}

func indexOf(nodes []int64, seq int64) int {
	for i, n := range nodes {
		if n == seq {
			return i
		}
	}
	return -1
}

// sameExceptResultContent compares two tool/result data values after
// blanking message.content[0].content.
func sameExceptResultContent(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	blank := func(v any) {
		d, _ := v.(map[string]any)
		m, _ := d["message"].(map[string]any)
		c, _ := m["content"].([]any)
		if len(c) == 1 {
			if blk, ok := c[0].(map[string]any); ok {
				blk["content"] = nil
			}
		}
	}
	blank(x)
	blank(y)
	return reflect.DeepEqual(x, y)
}

const (
	noticeOutcomeUnknown = "The tool call was interrupted after it was recorded, but no result was durably recorded. Its outcome is unknown. Decide whether to retry from the tool semantics: retry only if the operation is read-only or idempotent; if it may have side effects, first verify external state or ask the user. Do not retry blindly."
	noticeNotStarted     = "The tool call was interrupted before the Harness recorded it as started. Retry it if it is still needed."
)

// crashClosers computes dsh's interruptedTurnClosers (spec §4 step 5).
func crashClosers(events []Event) []Event {
	var c closerState
	for i := range events {
		c.feed(&events[i])
	}
	if len(events) == 0 {
		return nil
	}
	last := &events[len(events)-1]
	return c.closers(last.Seq, last.Time)
}

// pendingCall is a tool call of the open step without a result yet.
type pendingCall struct {
	id      string
	step    json.RawMessage
	callSeq int64
	logged  bool
}

// closerState is crashClosers' fold over the events seen so far: the open
// turn and step and their pending tool calls (small, so a log can be
// streamed through it). It keeps copies of what it retains, never slices
// of the events' data.
type closerState struct {
	openTurn json.RawMessage
	openStep json.RawMessage
	calls    []*pendingCall
}

func (c *closerState) byID(id string) *pendingCall {
	for _, p := range c.calls {
		if p.id == id {
			return p
		}
	}
	return nil
}

func cloneRaw(v json.RawMessage) json.RawMessage {
	if v == nil {
		return nil
	}
	return append(json.RawMessage(nil), v...)
}

// feed folds one (upgraded) event.
func (c *closerState) feed(e *Event) {
	d, _ := e.obj()
	switch e.Type {
	case "turn/start":
		c.openTurn, c.openStep, c.calls = cloneRaw(compact(d["turn"])), nil, nil
	case "turn/end":
		c.openTurn, c.openStep, c.calls = nil, nil, nil
	case "step/start":
		c.openStep = cloneRaw(compact(d["step"]))
	case "step/end":
		c.openStep, c.calls = nil, nil
	case "assistant/message":
		m, _ := parseObject(d["message"])
		blocks, _ := array(m["content"])
		for _, b := range blocks {
			bo, _ := parseObject(b)
			if t, _ := str(bo["type"]); t == "tool-call" {
				id, _ := str(bo["id"])
				// Like a JS Map.set: an existing entry keeps its place
				// but gets a fresh value.
				if p := c.byID(id); p != nil {
					*p = pendingCall{id: id, step: cloneRaw(compact(d["step"]))}
				} else {
					c.calls = append(c.calls, &pendingCall{id: id, step: cloneRaw(compact(d["step"]))})
				}
			}
		}
	case "tool/call":
		id, _ := str(d["callId"])
		if p := c.byID(id); p != nil {
			p.callSeq, p.logged = e.Seq, true
		}
	case "tool/result":
		m, _ := parseObject(d["message"])
		src, _ := parseObject(m["source"])
		id, _ := str(src["callId"])
		for j, p := range c.calls {
			if p.id == id {
				c.calls = append(c.calls[:j], c.calls[j+1:]...)
				break
			}
		}
	}
}

// closers returns the closing events after a last event with seq lastSeq
// and time t (nil when no turn is open).
func (c *closerState) closers(lastSeq, t int64) []Event {
	if c.openTurn == nil {
		return nil
	}
	openTurn := c.openTurn
	seq := lastSeq + 1
	var out []Event
	for _, p := range c.calls {
		code, name, text := "TOOL_NOT_STARTED", "ToolNotStartedError", noticeNotStarted
		if p.logged {
			code, name, text = "TOOL_OUTCOME_UNKNOWN", "ToolOutcomeUnknownError", noticeOutcomeUnknown
		}
		idStr := "interrupted-tool-result-" + p.id + "-" + itoa(seq)
		textBlock := newObj().str("type", "text").str("text", text).bytes()
		block := newObj().str("type", "tool-result").str("toolCallId", p.id).raw("isError", []byte("true")).
			raw("content", wrapArray(textBlock)).bytes()
		msg := newObj().str("id", idStr).str("role", "user").
			raw("source", newObj().str("kind", "tool").str("callId", p.id).bytes()).
			raw("content", wrapArray(block)).bytes()
		step := p.step
		if step == nil {
			step = []byte("null")
		}
		data := newObj().raw("turn", openTurn).raw("step", step).raw("message", msg).
			raw("error", newObj().str("name", name).str("code", code).bytes()).bytes()
		ev := Event{Type: "tool/result", Seq: seq, Time: t, Data: data, SurfaceOp: json.RawMessage(`"append"`), opFirst: true}
		if p.logged {
			ev.SourceEventSeqs = wrapArray([]byte(itoa(p.callSeq)))
		}
		out = append(out, ev)
		seq++
	}
	if c.openStep != nil {
		out = append(out, Event{Type: "step/end", Seq: seq, Time: t, Data: newObj().raw("turn", openTurn).raw("step", c.openStep).bytes()})
		seq++
	}
	out = append(out, Event{Type: "turn/end", Seq: seq, Time: t,
		Data: newObj().raw("turn", openTurn).raw("reason", json.RawMessage(`{"kind":"interrupted"}`)).bytes()})
	return out
}

func wrapArray(v []byte) json.RawMessage {
	return append(append([]byte{'['}, v...), ']')
}
