package transcript

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// UpgradeEvent applies dsh's read-time upgrade of older record shapes
// (spec §2.9) to one event in place. earlierID returns the message id of
// the upgraded event at an earlier seq, which a replacing tool/result
// inherits ("" when none).
func UpgradeEvent(sessionID string, e *Event, earlierID func(seq int64) string) error {
	var err error
	switch e.Type {
	case "request/header-delta", "mode/set":
		err = Corruptf("event %d: retired event type %s", e.Seq, jsjson.Quote(e.Type))
	case "request/header":
		if r, _ := strView(e.data().get("reason")); r == "fallback" {
			err = Corruptf("event %d: request/header with the retired reason \"fallback\"", e.Seq)
		}
	case "turn/start":
		if e.data().get("trigger") != nil { // else the current shape
			err = upgradeTurnStart(e)
		}
	case "turn/end":
		err = upgradeTurnEnd(e)
	case "steering/message":
		err = upgradeSteering(sessionID, e)
	}
	if err == nil && needsUpgradeCheck(e) {
		upgradeMessage(sessionID, e, earlierID)
	}
	return err
}

// needsUpgradeCheck reports whether upgradeMessage could change e (a
// pre-identity message), from its top-level data keys alone.
// Only messages read their data: most events of a log are not one.
func needsUpgradeCheck(e *Event) bool {
	switch e.Type {
	case "user/message":
		return presentThenAbsent(e.data(), 2, "content", "source", "id", "role", "message")
	case "assistant/message":
		return presentThenAbsent(e.data(), 2, "content", "provenance", "message")
	case "tool/result":
		return presentThenAbsent(e.data(), 3, "callId", "content", "isError", "message")
	}
	return false
}

// presentThenAbsent reports whether d is an object with the first n of keys
// and none of the others (at most 8 in all).
func presentThenAbsent(d obj, n int, keys ...string) bool {
	v, _, ok := d.pick(keys...)
	for i := range keys {
		ok = ok && (v[i] != nil) == (i < n)
	}
	return ok
}

func legacyID(sessionID string, seq int64) string {
	return "legacy-message:" + sessionID + ":" + strconv.FormatInt(seq, 10)
}

// upgradeTurnStart upgrades a legacy turn/start, whose data UpgradeEvent
// found to be an object with a trigger.
func upgradeTurnStart(e *Event) error {
	d := e.data()
	turn, ok := safeInt(d.get("turn"))
	if !ok || turn < 1 || !d.hasExactKeys("turn", "trigger") {
		return Corruptf("event %d: malformed legacy turn/start", e.Seq)
	}
	t := d.sub("trigger")
	if k, _ := nonEmptyStr(t.get("kind")); !t.valid() || k == "" {
		return Corruptf("event %d: malformed legacy turn/start trigger", e.Seq)
	}
	e.Data = jsjson.NewObject(nil).Raw("turn", Compact(d.get("turn"))).Bytes()
	return nil
}

func upgradeTurnEnd(e *Event) error {
	bad := func() error { return Corruptf("event %d: malformed turn/end", e.Seq) }
	d := e.data()
	turn, ok := safeInt(d.get("turn"))
	if !ok || turn < 1 || !d.hasExactKeys("turn", "reason") {
		return bad()
	}
	r := d.sub("reason")
	kind, isString := strView(r.get("kind"))
	reason, ok := upgradedReason(kind, r)
	if !r.valid() || !isString || !ok {
		return bad()
	}
	if reason != nil {
		e.Data = jsjson.NewObject(nil).Raw("turn", Compact(d.get("turn"))).Raw("reason", reason).Bytes()
	}
	return nil
}

// upgradedReason returns the current form of a turn/end reason, nil when
// current already; ok is false for a malformed one.
func upgradedReason(kind string, r obj) (reason json.RawMessage, ok bool) {
	switch kind {
	case "completed", "blocked", "max-tokens", "interrupted":
		return nil, r.hasExactKeys("kind")
	case "aborted":
		if r.get("reason") != nil {
			return nil, true
		}
		return json.RawMessage(`{"kind":"aborted","reason":{"kind":"legacy"}}`), r.hasExactKeys("kind")
	case "disposed":
		return json.RawMessage(`{"kind":"aborted","reason":{"kind":"disposed"}}`), r.hasExactKeys("kind")
	case "error":
		return upgradedErrorReason(r)
	}
	return nil, true
}

// upgradedErrorReason is upgradedReason for an error reason.
func upgradedErrorReason(r obj) (json.RawMessage, bool) {
	if r.get("error") != nil {
		return nil, true
	}
	if _, ok := nonNegSafeInt(r.get("step")); !ok {
		return nil, false
	}
	var failure json.RawMessage
	switch {
	case r.hasExactKeys("kind", "step", "failure"):
		f := r.sub("failure")
		if !f.valid() || !validFailure(f) {
			return nil, false
		}
		failure = Compact(f.raw)
	case r.hasExactKeys("kind", "step", "message") || r.hasExactKeys("kind", "step", "message", "code"):
		code := json.RawMessage(`"UNKNOWN"`)
		if c := r.get("code"); c != nil {
			code = Compact(c)
		}
		failure = jsjson.NewObject(nil).Raw("message", Compact(r.get("message"))).Raw("code", code).Bytes()
	default:
		return nil, false
	}
	return jsjson.NewObject(nil).String("kind", "error").Raw("error", failure).Bytes(), true
}

// validFailure checks {message, code, status?, providerRetryAfterMs?,
// requestId?} key-wise.
func validFailure(f obj) bool {
	v, other, _ := f.pick("message", "code", "status", "providerRetryAfterMs", "requestId")
	return v[0] != nil && v[1] != nil && !other
}

func upgradeSteering(sessionID string, e *Event) error {
	d := e.data()
	if !d.valid() {
		return Corruptf("event %d: malformed legacy steering/message", e.Seq)
	}
	if d.hasExactKeys("turn", "message") {
		if _, ok := safeInt(d.get("turn")); ok && isObject(d.get("message")) {
			e.Type = "user/message"
			e.Data = Compact(d.get("message"))
			return nil
		}
	}
	if d.hasExactKeys("turn", "content", "source") {
		e.Type = "user/message"
		e.Data = jsjson.NewObject(nil).Raw("content", Compact(d.get("content"))).Raw("source", Compact(d.get("source"))).
			String("id", legacyID(sessionID, e.Seq)).String("role", "user").Bytes()
		return nil
	}
	return Corruptf("event %d: malformed legacy steering/message", e.Seq)
}

// upgradeMessage upgrades pre-identity message data (§2.9 step 4).
func upgradeMessage(sessionID string, e *Event, earlierID func(seq int64) string) {
	d := e.data()
	if !d.valid() {
		return
	}
	id := legacyID(sessionID, e.Seq)
	w := jsjson.NewObject(nil)
	switch e.Type {
	case "user/message":
		copyExcept(w, d)
		w.String("id", id).String("role", "user")
	case "assistant/message":
		msg := jsjson.NewObject(nil).String("id", id).String("role", "assistant").
			Raw("content", Compact(d.get("content"))).Raw("source", modelSource(d.get("provenance"))).Bytes()
		copyExcept(w, d, "content", "provenance")
		w.Raw("message", msg)
	default: // tool/result
		if start, ok := replaceStart(e.SurfaceOp); ok {
			id = earlierID(start)
		}
		callID := Compact(d.get("callId"))
		block := jsjson.NewObject(nil).String("type", "tool-result").Raw("toolCallId", callID).
			Raw("content", Compact(d.get("content"))).Raw("isError", Compact(d.get("isError"))).Bytes()
		msg := jsjson.NewObject(nil).String("id", id).String("role", "user").
			Raw("content", wrapArray(block)).
			Raw("source", jsjson.NewObject(nil).String("kind", "tool").Raw("callId", callID).Bytes()).Bytes()
		copyExcept(w, d, "callId", "content", "isError")
		w.Raw("message", msg)
	}
	e.Data = w.Bytes()
}

// copyExcept writes the members of d but skip, each key once where it
// first appears, with its last value (as JSON.parse keeps it).
func copyExcept(w *jsjson.Object, d obj, skip ...string) {
	for _, k := range orderedKeys(d.raw) {
		if !slices.Contains(skip, k) {
			w.Raw(k, Compact(d.get(k)))
		}
	}
}

// modelSource is a legacy provenance as a source of kind "model" (only
// that kind when the provenance is not an object).
func modelSource(provenance json.RawMessage) json.RawMessage {
	src := jsjson.NewObject(nil)
	p := rawObj(provenance)
	for _, k := range orderedKeys(provenance) {
		if k == "kind" {
			src.String("kind", "model")
		} else {
			src.Raw(k, Compact(p.get(k)))
		}
	}
	if p.get("kind") == nil {
		src.String("kind", "model")
	}
	return src.Bytes()
}

// replaceStart returns a replace surface op's start.
func replaceStart(op json.RawMessage) (int64, bool) {
	o := rawObj(op)
	if s, _ := strView(o.get("op")); s != "replace" {
		return 0, false
	}
	return nonNegSafeInt(o.get("start"))
}

// messageID returns the id of a message event ("" when it has none).
func messageID(e *Event) string {
	switch d := e.data(); e.Type {
	case "user/message":
		id, _ := str(d.get("id"))
		return id
	case "assistant/message", "tool/result":
		id, _ := str(d.sub("message").get("id"))
		return id
	}
	return ""
}
