package transcript

import (
	"encoding/json"
	"strconv"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// upgradeEvent applies HEAD's read-time upgrade of older record shapes
// (spec §2.9, steps 0–4) to one event in place (the fold runs it on every
// stored event in log order). earlierID returns the message
// id of the already-upgraded event at an earlier seq ("" when there is no
// such event or it has no id), which a replacing tool/result inherits.
func UpgradeEvent(sessionID string, e *Event, earlierID func(seq int64) string) error {
	switch e.Type {
	case "request/header-delta", "mode/set":
		return Corruptf("event %d: retired event type %s", e.Seq, jsjson.Quote(e.Type))
	case "request/header":
		if r, _ := str(field(e.Data, "reason")); r == "fallback" {
			return Corruptf("event %d: request/header with the retired reason \"fallback\"", e.Seq)
		}
	case "turn/start":
		if field(e.Data, "trigger") == nil {
			return nil // the current shape: nothing to upgrade
		}
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
	if needsUpgradeCheck(e) {
		upgradeMessage(sessionID, e, earlierID)
	}
	return nil
}

// Top-level data keys the message upgrade looks at.
const (
	lkContent uint16 = 1 << iota
	lkSource
	lkID
	lkRole
	lkMessage
	lkProvenance
	lkCallID
	lkIsError
)

// needsUpgradeCheck reports whether upgradeMessage could change e: only a
// pre-identity message can. Current-format messages (the bulk of a log)
// are recognised from their top-level data keys alone, without decoding
// the data.
func needsUpgradeCheck(e *Event) bool {
	if !IsSurfaceType(e.Type) {
		return false
	}
	var m uint16
	if !fields(e.Data, func(k string, _ []byte) {
		switch k {
		case "content":
			m |= lkContent
		case "source":
			m |= lkSource
		case "id":
			m |= lkID
		case "role":
			m |= lkRole
		case "message":
			m |= lkMessage
		case "provenance":
			m |= lkProvenance
		case "callId":
			m |= lkCallID
		case "isError":
			m |= lkIsError
		}
	}) {
		return false // not an object: upgradeMessage leaves it alone
	}
	has := func(bits uint16) bool { return m&bits == bits }
	switch e.Type {
	case "user/message":
		return has(lkContent|lkSource) && m&(lkID|lkRole|lkMessage) == 0
	case "assistant/message":
		return has(lkContent|lkProvenance) && m&lkMessage == 0
	default:
		return has(lkCallID|lkContent|lkIsError) && m&lkMessage == 0
	}
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
		return Corruptf("event %d: malformed legacy turn/start", e.Seq)
	}
	t, ok := objectOf(trig)
	if k, _ := nonEmptyStr(t["kind"]); !ok || k == "" {
		return Corruptf("event %d: malformed legacy turn/start trigger", e.Seq)
	}
	e.setData(jsjson.NewObject(nil).Raw("turn", Compact(d["turn"])).Bytes())
	return nil
}

func upgradeTurnEnd(e *Event) error {
	bad := Corruptf("event %d: malformed turn/end", e.Seq)
	d, ok := e.obj()
	if !ok {
		return bad
	}
	turn, ok := safeInt(d["turn"])
	if !ok || turn < 1 || !hasExactKeys(d, "turn", "reason") {
		return bad
	}
	r, ok := objectOf(d["reason"])
	if !ok {
		return bad
	}
	kind, ok := str(r["kind"])
	if !ok {
		return bad
	}
	setReason := func(reason json.RawMessage) {
		e.setData(jsjson.NewObject(nil).Raw("turn", Compact(d["turn"])).Raw("reason", reason).Bytes())
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
			f, ok := objectOf(r["failure"])
			if !ok || !validFailure(f) {
				return bad
			}
			setReason(jsjson.NewObject(nil).String("kind", "error").Raw("error", Compact(r["failure"])).Bytes())
		case hasExactKeys(r, "kind", "step", "message") || hasExactKeys(r, "kind", "step", "message", "code"):
			msg := Compact(r["message"])
			code := json.RawMessage(`"UNKNOWN"`)
			if c, has := r["code"]; has {
				code = Compact(c)
			}
			setReason(jsjson.NewObject(nil).String("kind", "error").Raw("error", jsjson.NewObject(nil).Raw("message", msg).Raw("code", code).Bytes()).Bytes())
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
		return Corruptf("event %d: malformed legacy steering/message", e.Seq)
	}
	if hasExactKeys(d, "turn", "message") {
		if _, ok := safeInt(d["turn"]); ok && isObject(d["message"]) {
			e.Type = "user/message"
			e.setData(Compact(d["message"]))
			return nil
		}
	}
	if hasExactKeys(d, "turn", "content", "source") {
		e.Type = "user/message"
		e.setData(jsjson.NewObject(nil).Raw("content", Compact(d["content"])).Raw("source", Compact(d["source"])).
			String("id", legacyID(sessionID, e.Seq)).String("role", "user").Bytes())
		return nil
	}
	return Corruptf("event %d: malformed legacy steering/message", e.Seq)
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
	copyExcept := func(w *jsjson.Object, skip ...string) {
	next:
		for _, k := range orderedKeys(e.Data) {
			for _, s := range skip {
				if k == s {
					continue next
				}
			}
			w.Raw(k, Compact(d[k]))
		}
	}
	switch e.Type {
	case "user/message":
		if has("content") && has("source") && !has("id") && !has("role") && !has("message") {
			w := jsjson.NewObject(nil)
			copyExcept(w)
			e.setData(w.String("id", legacyID(sessionID, e.Seq)).String("role", "user").Bytes())
		}
	case "assistant/message":
		if has("content") && has("provenance") && !has("message") {
			src := jsjson.NewObject(nil)
			if p, ok := objectOf(d["provenance"]); ok {
				for _, k := range orderedKeys(d["provenance"]) {
					if k == "kind" {
						src.String("kind", "model")
					} else {
						src.Raw(k, Compact(p[k]))
					}
				}
				if _, ok := p["kind"]; !ok {
					src.String("kind", "model")
				}
			} else {
				src.String("kind", "model")
			}
			msg := jsjson.NewObject(nil).String("id", legacyID(sessionID, e.Seq)).String("role", "assistant").
				Raw("content", Compact(d["content"])).Raw("source", src.Bytes()).Bytes()
			w := jsjson.NewObject(nil)
			copyExcept(w, "content", "provenance")
			e.setData(w.Raw("message", msg).Bytes())
		}
	case "tool/result":
		if has("callId") && has("content") && has("isError") && !has("message") {
			id := legacyID(sessionID, e.Seq)
			if start, ok := replaceStart(e.SurfaceOp); ok {
				id = earlierID(start)
			}
			callID := Compact(d["callId"])
			block := jsjson.NewObject(nil).String("type", "tool-result").Raw("toolCallId", callID).
				Raw("content", Compact(d["content"])).Raw("isError", Compact(d["isError"])).Bytes()
			msg := jsjson.NewObject(nil).String("id", id).String("role", "user").
				Raw("content", append(append([]byte{'['}, block...), ']')).
				Raw("source", jsjson.NewObject(nil).String("kind", "tool").Raw("callId", callID).Bytes()).Bytes()
			w := jsjson.NewObject(nil)
			copyExcept(w, "callId", "content", "isError")
			e.setData(w.Raw("message", msg).Bytes())
		}
	}
}

// replaceStart returns a replace surface op's start.
func replaceStart(op json.RawMessage) (int64, bool) {
	o, ok := objectOf(op)
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
		m, ok := objectOf(d["message"])
		if !ok {
			return ""
		}
		id, _ := str(m["id"])
		return id
	}
	return ""
}
