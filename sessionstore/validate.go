package sessionstore

import (
	"bytes"
	"encoding/json"
)

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
		if !validMessage(e.Data, "user") {
			return corruptf("event %d: malformed user/message", e.Seq)
		}
	case "assistant/message":
		m := field(e.Data, "message")
		if !validMessage(m, "assistant") {
			return corruptf("event %d: malformed assistant/message", e.Seq)
		}
		var kind, provider, model []byte
		fields(field(m, "source"), func(k string, v []byte) {
			switch k {
			case "kind":
				kind = v
			case "provider":
				provider = v
			case "model":
				model = v
			}
		})
		k, _ := str(kind)
		_, okP := nonEmptyStr(provider)
		_, okM := nonEmptyStr(model)
		if k != "model" || !okP || !okM {
			return corruptf("event %d: assistant/message source is not a model with provider and model", e.Seq)
		}
	case "tool/result":
		m := field(e.Data, "message")
		if !validMessage(m, "user") {
			return corruptf("event %d: malformed tool/result", e.Seq)
		}
		var kind, call []byte
		fields(field(m, "source"), func(k string, v []byte) {
			switch k {
			case "kind":
				kind = v
			case "callId":
				call = v
			}
		})
		k, _ := str(kind)
		callID, okC := nonEmptyStr(call)
		if k != "tool" || !okC {
			return corruptf("event %d: tool/result source is not a tool with a callId", e.Seq)
		}
		var blocks [][]byte
		elements(field(m, "content"), func(v []byte) { blocks = append(blocks, v) })
		if len(blocks) != 1 {
			return corruptf("event %d: tool/result must hold exactly one tool-result block", e.Seq)
		}
		var typ, content, tcid []byte
		ok := fields(blocks[0], func(k string, v []byte) {
			switch k {
			case "type":
				typ = v
			case "content":
				content = v
			case "toolCallId":
				tcid = v
			}
		})
		t, _ := str(typ)
		tc, okT := str(tcid)
		if !ok || t != "tool-result" || !isArray(content) || !okT || tc != callID {
			return corruptf("event %d: tool/result block does not match its callId", e.Seq)
		}
	}
	return nil
}

// validMessage checks a message object: non-empty string id, the role,
// a source object with a non-empty string kind, an array content.
func validMessage(m []byte, role string) bool {
	var id, r, src, content []byte
	if !fields(m, func(k string, v []byte) {
		switch k {
		case "id":
			id = v
		case "role":
			r = v
		case "source":
			src = v
		case "content":
			content = v
		}
	}) {
		return false
	}
	if _, ok := nonEmptyStr(id); !ok {
		return false
	}
	if got, _ := str(r); got != role {
		return false
	}
	if _, ok := nonEmptyStr(field(src, "kind")); !ok || !isObject(src) {
		return false
	}
	return isArray(content)
}

// checkEnvelope applies assertSessionEventEnvelope (spec §2.3) to a stored
// event (events made by expansion or repair are well-formed).
func checkEnvelope(e *Event) error {
	env := e.env
	if env == nil {
		return nil
	}
	if env.hasExtra {
		return corruptf("event %d: unexpected envelope key %s", e.Seq, jsQuote(env.extra))
	}
	if env.keys&(keySeq0|keyTime0) != 0 {
		k := "seq0"
		if env.keys&keySeq0 == 0 {
			k = "time0"
		}
		return corruptf("event %d: unexpected envelope key %s", e.Seq, jsQuote(k))
	}
	if _, ok := str(env.typ); !ok {
		return corruptf("event %d: type is not a string", e.Seq)
	}
	if _, ok := nonNegSafeInt(env.seq); !ok {
		return corruptf("event %d: seq is not a non-negative safe integer", e.Seq)
	}
	if _, ok := safeInt(env.time); !ok {
		return corruptf("event %d: time is not a safe integer", e.Seq)
	}
	if env.keys&keyData == 0 {
		return corruptf("event %d: data is missing", e.Seq)
	}
	if env.keys&keyIgnorable != 0 && string(compact(env.ignorable)) != "true" {
		return corruptf("event %d: ignorable must be true", e.Seq)
	}
	return nil
}

// checkRequestHeader applies the request/header rules of spec §4 step 6.
func checkRequestHeader(e *Event) error {
	bad := func(what string) error { return corruptf("event %d: request/header %s", e.Seq, what) }
	if !isObject(e.Data) {
		return bad("data is not an object")
	}
	h := field(e.Data, "header")
	if !isObject(h) {
		return bad("has no header object")
	}
	var cfgRaw, adRaw []byte
	hasAD := false
	fields(h, func(k string, v []byte) {
		switch k {
		case "config":
			cfgRaw = v
		case "adapterDefaults":
			adRaw, hasAD = v, true
		}
	})
	cfg, ok := objectOf(cfgRaw)
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
	if hasAD {
		ad, ok := objectOf(adRaw)
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
	var out []int64
	ok := true
	if !elements(bytes.TrimSpace(v), func(x []byte) {
		n, good := nonNegSafeInt(x)
		ok = ok && good
		out = append(out, n)
	}) || !ok {
		return nil, false
	}
	if out == nil {
		out = []int64{}
	}
	return out, true
}
