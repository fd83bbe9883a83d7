package sessionstore

import "encoding/json"

// knownEventTypes is HEAD's KNOWN_SESSION_EVENT_TYPES (spec §2.5).
var knownEventTypes = map[string]bool{}

func init() {
	for _, t := range []string{
		"agent-preset/selected", "agent/inbox/spliced", "approval/asked", "approval/decided",
		"approval/policy", "assistant/chunk", "assistant/message", "command/done", "command/run",
		"compaction/end", "compaction/prune", "compaction/start", "compaction/summary",
		"feedback/record", "goal/change", "hook/invoked", "hook/result", "llm/retry",
		"llm/retry-started", "permission/preset", "plan/mode", "request/context", "request/header",
		"sandbox/mode", "schedule/change", "session/end-seed", "session/title",
		"session/title-llm-request", "step/end", "step/start", "subagent/descriptor", "team/member",
		"team/message/delivered", "team/message/queued", "team/task", "todo/write",
		"tool-workflow/agent-end", "tool-workflow/agent-start", "tool-workflow/run-end",
		"tool-workflow/run-start", "tool/call", "tool/code-dispatch", "tool/code-dispatch-start",
		"tool/result", "turn/end", "turn/start", "user/message", "web/deepseek-search-llm-request",
	} {
		knownEventTypes[t] = true
	}
}

// isSurfaceType reports whether t is one of the three surface event types.
func isSurfaceType(t string) bool {
	return t == "user/message" || t == "assistant/message" || t == "tool/result"
}

// checkMessage applies the per-message shape checks (spec §4 step 3).
func checkMessage(e *Event) error {
	switch e.Type {
	case "user/message":
		d, ok := e.obj()
		if !ok || !validMessage(d, "user") {
			return corruptf("event %d: malformed user/message", e.Seq)
		}
	case "assistant/message":
		d, ok := e.obj()
		m, ok2 := parseObject(d["message"])
		if !ok || !ok2 || !validMessage(m, "assistant") {
			return corruptf("event %d: malformed assistant/message", e.Seq)
		}
		src, _ := parseObject(m["source"])
		k, _ := str(src["kind"])
		_, okP := nonEmptyStr(src["provider"])
		_, okM := nonEmptyStr(src["model"])
		if k != "model" || !okP || !okM {
			return corruptf("event %d: assistant/message source is not a model with provider and model", e.Seq)
		}
	case "tool/result":
		d, ok := e.obj()
		m, ok2 := parseObject(d["message"])
		if !ok || !ok2 || !validMessage(m, "user") {
			return corruptf("event %d: malformed tool/result", e.Seq)
		}
		src, _ := parseObject(m["source"])
		k, _ := str(src["kind"])
		callID, okC := nonEmptyStr(src["callId"])
		if k != "tool" || !okC {
			return corruptf("event %d: tool/result source is not a tool with a callId", e.Seq)
		}
		blocks, _ := array(m["content"])
		if len(blocks) != 1 {
			return corruptf("event %d: tool/result must hold exactly one tool-result block", e.Seq)
		}
		b, ok := parseObject(blocks[0])
		t, _ := str(b["type"])
		tc, okT := str(b["toolCallId"])
		if !ok || t != "tool-result" || !isArray(b["content"]) || !okT || tc != callID {
			return corruptf("event %d: tool/result block does not match its callId", e.Seq)
		}
	}
	return nil
}

func validMessage(m object, role string) bool {
	if m == nil {
		return false
	}
	if _, ok := nonEmptyStr(m["id"]); !ok {
		return false
	}
	if r, _ := str(m["role"]); r != role {
		return false
	}
	src, ok := parseObject(m["source"])
	if !ok {
		return false
	}
	if _, ok := nonEmptyStr(src["kind"]); !ok {
		return false
	}
	return isArray(m["content"])
}

// checkEnvelope applies assertSessionEventEnvelope (spec §2.3) to a stored
// event (events made by expansion or repair are well-formed).
func checkEnvelope(e *Event) error {
	if e.env == nil {
		return nil
	}
	for k := range e.env {
		switch k {
		case "type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs", "ignorable":
		default:
			return corruptf("event %d: unexpected envelope key %s", e.Seq, jsQuote(k))
		}
	}
	if _, ok := str(e.env["type"]); !ok {
		return corruptf("event %d: type is not a string", e.Seq)
	}
	if _, ok := nonNegSafeInt(e.env["seq"]); !ok {
		return corruptf("event %d: seq is not a non-negative safe integer", e.Seq)
	}
	if _, ok := safeInt(e.env["time"]); !ok {
		return corruptf("event %d: time is not a safe integer", e.Seq)
	}
	if _, ok := e.env["data"]; !ok {
		return corruptf("event %d: data is missing", e.Seq)
	}
	if v, ok := e.env["ignorable"]; ok && string(compact(v)) != "true" {
		return corruptf("event %d: ignorable must be true", e.Seq)
	}
	return nil
}

// checkRequestHeader applies the request/header rules of spec §4 step 6.
func checkRequestHeader(e *Event) error {
	bad := func(what string) error { return corruptf("event %d: request/header %s", e.Seq, what) }
	d, ok := e.obj()
	if !ok {
		return bad("data is not an object")
	}
	h, ok := parseObject(d["header"])
	if !ok {
		return bad("has no header object")
	}
	cfg, ok := parseObject(h["config"])
	if !ok {
		return bad("has no config object")
	}
	if _, ok := nonEmptyStr(cfg["provider"]); !ok {
		return bad("config.provider is not a non-empty string")
	}
	if _, ok := nonEmptyStr(cfg["model"]); !ok {
		return bad("config.model is not a non-empty string")
	}
	if v, ok := cfg["reasoningEffort"]; ok {
		if _, ok := nonEmptyStr(v); !ok {
			return bad("config.reasoningEffort is not a non-empty string")
		}
	}
	if v, ok := h["adapterDefaults"]; ok {
		ad, ok := parseObject(v)
		if !ok {
			return bad("adapterDefaults is not an object")
		}
		for k, val := range ad {
			if k != "reasoningEffort" && k != "maxTokens" {
				return bad("adapterDefaults has key " + jsQuote(k))
			}
			if string(compact(val)) != "true" {
				return bad("adapterDefaults." + k + " is not true")
			}
			if _, present := cfg[k]; !present {
				return bad("adapterDefaults." + k + " has no matching config field")
			}
		}
	}
	return nil
}

// parseSeqList parses a sourceEventSeqs value.
func parseSeqList(v json.RawMessage) ([]int64, bool) {
	a, ok := array(v)
	if !ok {
		return nil, false
	}
	out := make([]int64, len(a))
	for i, x := range a {
		n, ok := nonNegSafeInt(x)
		if !ok {
			return nil, false
		}
		out[i] = n
	}
	return out, true
}
