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
	type pending struct {
		id      string
		step    json.RawMessage
		callSeq int64
		logged  bool
	}
	var (
		openTurn json.RawMessage
		openStep json.RawMessage
		calls    []*pending
	)
	byID := func(id string) *pending {
		for _, p := range calls {
			if p.id == id {
				return p
			}
		}
		return nil
	}
	for i := range events {
		e := &events[i]
		d, _ := e.obj()
		switch e.Type {
		case "turn/start":
			openTurn, openStep, calls = compact(d["turn"]), nil, nil
		case "turn/end":
			openTurn, openStep, calls = nil, nil, nil
		case "step/start":
			openStep = compact(d["step"])
		case "step/end":
			openStep, calls = nil, nil
		case "assistant/message":
			m, _ := parseObject(d["message"])
			blocks, _ := array(m["content"])
			for _, b := range blocks {
				bo, _ := parseObject(b)
				if t, _ := str(bo["type"]); t == "tool-call" {
					id, _ := str(bo["id"])
					// Like a JS Map.set: an existing entry keeps its place
					// but gets a fresh value.
					if p := byID(id); p != nil {
						*p = pending{id: id, step: compact(d["step"])}
					} else {
						calls = append(calls, &pending{id: id, step: compact(d["step"])})
					}
				}
			}
		case "tool/call":
			id, _ := str(d["callId"])
			if p := byID(id); p != nil {
				p.callSeq, p.logged = e.Seq, true
			}
		case "tool/result":
			m, _ := parseObject(d["message"])
			src, _ := parseObject(m["source"])
			id, _ := str(src["callId"])
			for j, p := range calls {
				if p.id == id {
					calls = append(calls[:j], calls[j+1:]...)
					break
				}
			}
		}
	}
	if openTurn == nil || len(events) == 0 {
		return nil
	}
	last := events[len(events)-1]
	seq, t := last.Seq+1, last.Time
	var out []Event
	for _, p := range calls {
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
	if openStep != nil {
		out = append(out, Event{Type: "step/end", Seq: seq, Time: t, Data: newObj().raw("turn", openTurn).raw("step", openStep).bytes()})
		seq++
	}
	out = append(out, Event{Type: "turn/end", Seq: seq, Time: t,
		Data: newObj().raw("turn", openTurn).raw("reason", json.RawMessage(`{"kind":"interrupted"}`)).bytes()})
	return out
}

func wrapArray(v []byte) json.RawMessage {
	return append(append([]byte{'['}, v...), ']')
}
