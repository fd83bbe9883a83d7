package transcript

import "github.com/dsh-lsp/dsh-lsp/internal/jsjson"

// knownEventTypes is HEAD's KNOWN_SESSION_EVENT_TYPES (spec §2.5).
var knownEventTypes = map[string]bool{
	"agent-preset/selected": true, "agent/inbox/spliced": true, "approval/asked": true, "approval/decided": true,
	"approval/policy": true, "assistant/chunk": true, "assistant/message": true, "command/done": true, "command/run": true,
	"compaction/end": true, "compaction/prune": true, "compaction/start": true, "compaction/summary": true,
	"feedback/record": true, "goal/change": true, "hook/invoked": true, "hook/result": true, "llm/retry": true,
	"llm/retry-started": true, "permission/preset": true, "plan/mode": true, "request/context": true, "request/header": true,
	"sandbox/mode": true, "schedule/change": true, "session/end-seed": true, "session/title": true,
	"session/title-llm-request": true, "step/end": true, "step/start": true, "subagent/descriptor": true, "team/member": true,
	"team/message/delivered": true, "team/message/queued": true, "team/task": true, "todo/write": true,
	"tool-workflow/agent-end": true, "tool-workflow/agent-start": true, "tool-workflow/run-end": true,
	"tool-workflow/run-start": true, "tool/call": true, "tool/code-dispatch": true, "tool/code-dispatch-start": true,
	"tool/result": true, "turn/end": true, "turn/start": true, "user/message": true, "web/deepseek-search-llm-request": true,
}

// IsSurfaceType reports whether t is one of the three surface event types.
func IsSurfaceType(t string) bool {
	return t == "user/message" || t == "assistant/message" || t == "tool/result"
}

// checkMessage applies the per-message shape checks (spec §4 step 3).
func checkMessage(e *Event) error {
	switch e.Type {
	case "user/message":
		if !validMessage(e.data(), "user") {
			return Corruptf("event %d: malformed user/message", e.Seq)
		}
	case "assistant/message":
		return checkAssistantMessage(e)
	case "tool/result":
		return checkToolResult(e)
	}
	return nil
}

// checkAssistantMessage checks an assistant message and its model source.
func checkAssistantMessage(e *Event) error {
	m := e.data().sub("message")
	if !validMessage(m, "assistant") {
		return Corruptf("event %d: malformed assistant/message", e.Seq)
	}
	src, _, _ := m.sub("source").pick("kind", "provider", "model")
	k, _ := strView(src[0])
	_, okP := nonEmptyStr(src[1])
	_, okM := nonEmptyStr(src[2])
	if k != "model" || !okP || !okM {
		return Corruptf("event %d: assistant/message source is not a model with provider and model", e.Seq)
	}
	return nil
}

// checkToolResult checks a tool result: a user message holding exactly
// one tool-result block for its call.
func checkToolResult(e *Event) error {
	m := e.data().sub("message")
	if !validMessage(m, "user") {
		return Corruptf("event %d: malformed tool/result", e.Seq)
	}
	src, _, _ := m.sub("source").pick("kind", "callId")
	k, _ := strView(src[0])
	callID, okC := nonEmptyStr(src[1])
	if k != "tool" || !okC {
		return Corruptf("event %d: tool/result source is not a tool with a callId", e.Seq)
	}
	var block obj
	n := 0
	m.elems("content", func(_ []byte, sub obj) {
		if n++; n == 1 {
			block = sub
		}
	})
	if n != 1 {
		return Corruptf("event %d: tool/result must hold exactly one tool-result block", e.Seq)
	}
	b, _, ok := block.pick("type", "content", "toolCallId")
	t, _ := strView(b[0])
	tc, okT := strView(b[2])
	if !ok || t != "tool-result" || !isArray(b[1]) || !okT || tc != callID {
		return Corruptf("event %d: tool/result block does not match its callId", e.Seq)
	}
	return nil
}

// validMessage checks a message object's id, role, source and content.
func validMessage(m obj, role string) bool {
	v, _, ok := m.pick("id", "role", "source", "content")
	_, okID := nonEmptyStr(v[0])
	got, _ := strView(v[1])
	_, okKind := nonEmptyStr(m.sub("source").get("kind"))
	return ok && okID && got == role && okKind && isObject(v[2]) && isArray(v[3])
}

// checkEnvelope applies assertSessionEventEnvelope (spec §2.3).
func checkEnvelope(e *Event) error {
	env := e.env
	if env == nil {
		return nil
	}
	if env.hasExtra {
		return Corruptf("event %d: unexpected envelope key %s", e.Seq, jsjson.Quote(env.extra))
	}
	if env.keys&(keySeq0|keyTime0) != 0 {
		k := "seq0"
		if env.keys&keySeq0 == 0 {
			k = "time0"
		}
		return Corruptf("event %d: unexpected envelope key %s", e.Seq, jsjson.Quote(k))
	}
	if !env.typeOK {
		return Corruptf("event %d: type is not a string", e.Seq)
	}
	if !env.seqOK {
		return Corruptf("event %d: seq is not a non-negative safe integer", e.Seq)
	}
	if !env.timeOK {
		return Corruptf("event %d: time is not a safe integer", e.Seq)
	}
	if env.keys&keyData == 0 {
		return Corruptf("event %d: data is missing", e.Seq)
	}
	if env.keys&keyIgnorable != 0 && string(Compact(env.ignorable)) != "true" {
		return Corruptf("event %d: ignorable must be true", e.Seq)
	}
	return nil
}

// checkRequestHeader applies the request/header rules of spec §4 step 6.
func checkRequestHeader(e *Event) error {
	bad := func(what string) error { return Corruptf("event %d: request/header %s", e.Seq, what) }
	if !isObject(e.Data) {
		return bad("data is not an object")
	}
	h := e.data().sub("header")
	if !isObject(h.raw) {
		return bad("has no header object")
	}
	hv, _, _ := h.pick("config", "adapterDefaults")
	cfg := rawObj(hv[0])
	if !cfg.valid() {
		return bad("has no config object")
	}
	if _, ok := nonEmptyStr(cfg.get("provider")); !ok {
		return bad("config.provider is not a non-empty string")
	}
	if _, ok := nonEmptyStr(cfg.get("model")); !ok {
		return bad("config.model is not a non-empty string")
	}
	if v := cfg.get("reasoningEffort"); v != nil {
		if _, ok := nonEmptyStr(v); !ok {
			return bad("config.reasoningEffort is not a non-empty string")
		}
	}
	if hv[1] == nil {
		return nil
	}
	ad, problem := rawObj(hv[1]), ""
	if !ad.each(func(k string, _ []byte) {
		if problem == "" {
			problem = adapterDefaultProblem(k, ad.get(k), cfg)
		}
	}) {
		return bad("adapterDefaults is not an object")
	}
	if problem != "" {
		return bad(problem)
	}
	return nil
}

// adapterDefaultProblem says what is wrong with the member k: v of a
// request header's adapterDefaults, "" when nothing.
func adapterDefaultProblem(k string, v []byte, cfg obj) string {
	switch {
	case k != "reasoningEffort" && k != "maxTokens":
		return "adapterDefaults has key " + jsjson.Quote(k)
	case string(Compact(v)) != "true":
		return "adapterDefaults." + k + " is not true"
	case cfg.get(k) == nil:
		return "adapterDefaults." + k + " has no matching config field"
	}
	return ""
}
