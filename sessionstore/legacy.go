package sessionstore

import (
	"encoding/json"
	"strconv"
)

// upgradeLegacy applies HEAD's read-time upgrade of older record shapes
// (spec §2.9, steps 0–4) to events in place. sessionID names upgraded
// messages legacy-message:<sessionId>:<seq>.
func upgradeLegacy(sessionID string, events []Event) error {
	for i := range events {
		earlierID := func(seq int64) string {
			if seq < int64(i) {
				return messageID(&events[seq])
			}
			return ""
		}
		if err := upgradeEvent(sessionID, &events[i], earlierID); err != nil {
			return err
		}
	}
	return nil
}

// upgradeEvent is one step of upgradeLegacy. earlierID returns the message
// id of the already-upgraded event at an earlier seq ("" when there is no
// such event or it has no id), which a replacing tool/result inherits.
func upgradeEvent(sessionID string, e *Event, earlierID func(seq int64) string) error {
	switch e.Type {
	case "request/header-delta", "mode/set":
		return corruptf("event %d: retired event type %s", e.Seq, jsQuote(e.Type))
	case "request/header":
		if d, ok := e.obj(); ok {
			if r, _ := str(d["reason"]); r == "fallback" {
				return corruptf("event %d: request/header with the retired reason \"fallback\"", e.Seq)
			}
		}
	case "turn/start":
		if err := upgradeTurnStart(e); err != nil {
			return err
		}
	case "turn/end":
		if err := upgradeTurnEnd(e); err != nil {
			return err
		}
	case "steering/message":
		if err := upgradeSteering(sessionID, e); err != nil {
			return err
		}
	}
	upgradeMessage(sessionID, e, earlierID)
	return nil
}

func legacyID(sessionID string, seq int64) string {
	return "legacy-message:" + sessionID + ":" + strconv.FormatInt(seq, 10)
}

func upgradeTurnStart(e *Event) error {
	d, ok := e.obj()
	if !ok {
		return nil
	}
	trig, has := d["trigger"]
	if !has {
		return nil
	}
	turn, ok := safeInt(d["turn"])
	if !ok || turn < 1 || !hasExactKeys(d, "turn", "trigger") {
		return corruptf("event %d: malformed legacy turn/start", e.Seq)
	}
	t, ok := parseObject(trig)
	if k, _ := nonEmptyStr(t["kind"]); !ok || k == "" {
		return corruptf("event %d: malformed legacy turn/start trigger", e.Seq)
	}
	e.setData(newObj().raw("turn", compact(d["turn"])).bytes())
	return nil
}

func upgradeTurnEnd(e *Event) error {
	bad := corruptf("event %d: malformed turn/end", e.Seq)
	d, ok := e.obj()
	if !ok {
		return bad
	}
	turn, ok := safeInt(d["turn"])
	if !ok || turn < 1 || !hasExactKeys(d, "turn", "reason") {
		return bad
	}
	r, ok := parseObject(d["reason"])
	if !ok {
		return bad
	}
	kind, ok := str(r["kind"])
	if !ok {
		return bad
	}
	setReason := func(reason json.RawMessage) {
		e.setData(newObj().raw("turn", compact(d["turn"])).raw("reason", reason).bytes())
	}
	switch kind {
	case "completed", "blocked", "max-tokens", "interrupted":
		if !hasExactKeys(r, "kind") {
			return bad
		}
	case "aborted":
		if _, has := r["reason"]; !has {
			if !hasExactKeys(r, "kind") {
				return bad
			}
			setReason(json.RawMessage(`{"kind":"aborted","reason":{"kind":"legacy"}}`))
		}
	case "disposed":
		if !hasExactKeys(r, "kind") {
			return bad
		}
		setReason(json.RawMessage(`{"kind":"aborted","reason":{"kind":"disposed"}}`))
	case "error":
		if _, has := r["error"]; has {
			return nil
		}
		if _, ok := nonNegSafeInt(r["step"]); !ok {
			return bad
		}
		switch {
		case hasExactKeys(r, "kind", "step", "failure"):
			f, ok := parseObject(r["failure"])
			if !ok || !validFailure(f) {
				return bad
			}
			setReason(newObj().str("kind", "error").raw("error", compact(r["failure"])).bytes())
		case hasExactKeys(r, "kind", "step", "message") || hasExactKeys(r, "kind", "step", "message", "code"):
			msg := compact(r["message"])
			code := json.RawMessage(`"UNKNOWN"`)
			if c, has := r["code"]; has {
				code = compact(c)
			}
			setReason(newObj().str("kind", "error").raw("error", newObj().raw("message", msg).raw("code", code).bytes()).bytes())
		default:
			return bad
		}
	}
	return nil
}

// validFailure checks {message, code, status?, providerRetryAfterMs?,
// requestId?} key-wise.
func validFailure(f object) bool {
	if _, ok := f["message"]; !ok {
		return false
	}
	if _, ok := f["code"]; !ok {
		return false
	}
	for k := range f {
		switch k {
		case "message", "code", "status", "providerRetryAfterMs", "requestId":
		default:
			return false
		}
	}
	return true
}

func upgradeSteering(sessionID string, e *Event) error {
	d, ok := e.obj()
	if !ok {
		return corruptf("event %d: malformed legacy steering/message", e.Seq)
	}
	if hasExactKeys(d, "turn", "message") {
		if _, ok := safeInt(d["turn"]); ok && isObject(d["message"]) {
			e.Type = "user/message"
			e.setData(compact(d["message"]))
			return nil
		}
	}
	if hasExactKeys(d, "turn", "content", "source") {
		e.Type = "user/message"
		e.setData(newObj().raw("content", compact(d["content"])).raw("source", compact(d["source"])).
			str("id", legacyID(sessionID, e.Seq)).str("role", "user").bytes())
		return nil
	}
	return corruptf("event %d: malformed legacy steering/message", e.Seq)
}

// upgradeMessage upgrades pre-identity message data (§2.9 step 4).
// earlierID gives the message id of an already-upgraded earlier event,
// which a replacing tool/result inherits.
func upgradeMessage(sessionID string, e *Event, earlierID func(seq int64) string) {
	d, ok := e.obj()
	if !ok {
		return
	}
	has := func(k string) bool { _, ok := d[k]; return ok }
	copyExcept := func(w *objWriter, skip ...string) {
	next:
		for _, k := range orderedKeys(e.Data) {
			for _, s := range skip {
				if k == s {
					continue next
				}
			}
			w.raw(k, compact(d[k]))
		}
	}
	switch e.Type {
	case "user/message":
		if has("content") && has("source") && !has("id") && !has("role") && !has("message") {
			w := newObj()
			copyExcept(w)
			e.setData(w.str("id", legacyID(sessionID, e.Seq)).str("role", "user").bytes())
		}
	case "assistant/message":
		if has("content") && has("provenance") && !has("message") {
			src := newObj()
			if p, ok := parseObject(d["provenance"]); ok {
				for _, k := range orderedKeys(d["provenance"]) {
					if k == "kind" {
						src.str("kind", "model")
					} else {
						src.raw(k, compact(p[k]))
					}
				}
				if _, ok := p["kind"]; !ok {
					src.str("kind", "model")
				}
			} else {
				src.str("kind", "model")
			}
			msg := newObj().str("id", legacyID(sessionID, e.Seq)).str("role", "assistant").
				raw("content", compact(d["content"])).raw("source", src.bytes()).bytes()
			w := newObj()
			copyExcept(w, "content", "provenance")
			e.setData(w.raw("message", msg).bytes())
		}
	case "tool/result":
		if has("callId") && has("content") && has("isError") && !has("message") {
			id := legacyID(sessionID, e.Seq)
			if start, ok := replaceStart(e.SurfaceOp); ok {
				id = earlierID(start)
			}
			callID := compact(d["callId"])
			block := newObj().str("type", "tool-result").raw("toolCallId", callID).
				raw("content", compact(d["content"])).raw("isError", compact(d["isError"])).bytes()
			msg := newObj().str("id", id).str("role", "user").
				raw("content", append(append([]byte{'['}, block...), ']')).
				raw("source", newObj().str("kind", "tool").raw("callId", callID).bytes()).bytes()
			w := newObj()
			copyExcept(w, "callId", "content", "isError")
			e.setData(w.raw("message", msg).bytes())
		}
	}
}

// replaceStart returns a replace surface op's start.
func replaceStart(op json.RawMessage) (int64, bool) {
	o, ok := parseObject(op)
	if !ok {
		return 0, false
	}
	if s, _ := str(o["op"]); s != "replace" {
		return 0, false
	}
	return nonNegSafeInt(o["start"])
}

// messageID returns the id of a message event ("" when it has none).
func messageID(e *Event) string {
	d, ok := e.obj()
	if !ok {
		return ""
	}
	switch e.Type {
	case "user/message":
		id, _ := str(d["id"])
		return id
	case "assistant/message", "tool/result":
		m, ok := parseObject(d["message"])
		if !ok {
			return ""
		}
		id, _ := str(m["id"])
		return id
	}
	return ""
}
