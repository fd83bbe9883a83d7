package sessionstore

import (
	"bytes"
	"encoding/json"
)

// Event is one session event of a log, after packed-row expansion (and,
// once a log is loaded, after the legacy upgrade of spec §2.9).
type Event struct {
	Type string
	Seq  int64
	Time int64
	// Data is the event's data value (raw JSON, never empty).
	Data json.RawMessage
	// SourceEventSeqs and SurfaceOp are the raw envelope values, nil when
	// absent.
	SourceEventSeqs json.RawMessage
	SurfaceOp       json.RawMessage
	// Ignorable is the envelope's "ignorable": true marker.
	Ignorable bool
	// opFirst writes surfaceOp before sourceEventSeqs, the key order of
	// dsh's in-memory crash closers.
	opFirst bool

	// env holds the envelope as stored, for validation (nil for events made
	// by expansion or repair, which are well-formed by construction).
	env object
	// dataObj caches Data parsed as an object while a log is loaded.
	dataObj          object
	dataOK, dataDone bool
}

// obj returns Data parsed as a JSON object (cached; ok is false when Data
// is not an object).
func (e *Event) obj() (object, bool) {
	if !e.dataDone {
		e.dataObj, e.dataOK = parseObject(e.Data)
		e.dataDone = true
	}
	return e.dataObj, e.dataOK
}

// setData replaces Data and drops the cached parse.
func (e *Event) setData(d json.RawMessage) {
	e.Data = d
	e.dataObj, e.dataOK, e.dataDone = nil, false, false
}

// dropCache releases the parsed data and envelope once a log is loaded.
func (e *Event) dropCache() {
	e.dataObj, e.dataOK, e.dataDone = nil, false, false
	e.env = nil
}

// MarshalJSON writes the complete event object as dsh stores and returns
// it: type, seq, time, data, sourceEventSeqs?, surfaceOp?, ignorable?.
func (e Event) MarshalJSON() ([]byte, error) { return e.appendJSON(nil), nil }

func (e Event) appendJSON(dst []byte) []byte {
	w := objWriter{buf: append(dst, '{')}
	w.str("type", e.Type).int("seq", e.Seq).int("time", e.Time).raw("data", e.Data)
	if e.SurfaceOp != nil && e.opFirst {
		w.raw("surfaceOp", e.SurfaceOp)
	}
	if e.SourceEventSeqs != nil {
		w.raw("sourceEventSeqs", e.SourceEventSeqs)
	}
	if e.SurfaceOp != nil && !e.opFirst {
		w.raw("surfaceOp", e.SurfaceOp)
	}
	if e.Ignorable {
		w.raw("ignorable", []byte("true"))
	}
	return w.bytes()
}

// Packed chunk row tags (spec §2.4).
const (
	rowText      = "text-chunks"
	rowReasoning = "reasoning-chunks"
	rowToolCall  = "tool-call-chunks"
)

// DecodeRecord decodes one storage record (one logical line without its
// "\n"): a session event, or a packed chunk row expanded into its
// assistant/chunk events. The event envelope is only checked for what the
// log scanner needs (an object with a type); full validation happens when
// the log is loaded. An error means the line is a bad record.
func DecodeRecord(line []byte) ([]Event, error) {
	o, ok := parseObject(validUTF8(line))
	if !ok {
		return nil, corruptf("record is not a JSON object")
	}
	// A non-string type is not a bad line for the scanner (dsh only checks
	// the seq there); it is refused later like any unknown type.
	typ, _ := str(o["type"])
	switch typ {
	case rowText, rowReasoning, rowToolCall:
		return expandRow(typ, o)
	}
	ev := Event{Type: typ, env: o, Data: o["data"], SourceEventSeqs: o["sourceEventSeqs"], SurfaceOp: o["surfaceOp"]}
	// seq/time are validated strictly later; here a non-integer seq just
	// cannot match the expected position.
	seq, ok := safeInt(o["seq"])
	if !ok {
		return nil, corruptf("event %s has no integer seq", jsQuote(typ))
	}
	ev.Seq = seq
	ev.Time, _ = safeInt(o["time"])
	if string(o["ignorable"]) == "true" {
		ev.Ignorable = true
	}
	return []Event{ev}, nil
}

func expandRow(typ string, o object) ([]Event, error) {
	if !hasExactKeys(o, "type", "seq0", "time0", "data") {
		return nil, corruptf("%s row has unexpected keys", typ)
	}
	seq0, ok := nonNegSafeInt(o["seq0"])
	if !ok {
		return nil, corruptf("%s row seq0 is not a non-negative safe integer", typ)
	}
	time0, ok := safeInt(o["time0"])
	if !ok {
		return nil, corruptf("%s row time0 is not a safe integer", typ)
	}
	d, ok := parseObject(o["data"])
	if !ok {
		return nil, corruptf("%s row data is not an object", typ)
	}
	payloadKey := "texts"
	if typ == rowToolCall {
		payloadKey = "args"
		_, hasName := d["name"]
		if hasName && !hasExactKeys(d, "turn", "step", "index", "id", "name", "dt", "args") ||
			!hasName && !hasExactKeys(d, "turn", "step", "index", "id", "dt", "args") {
			return nil, corruptf("%s row data has unexpected keys", typ)
		}
		if _, ok := str(d["id"]); !ok {
			return nil, corruptf("%s row id is not a string", typ)
		}
		if hasName {
			if _, ok := str(d["name"]); !ok {
				return nil, corruptf("%s row name is not a string", typ)
			}
		}
	} else if !hasExactKeys(d, "turn", "step", "index", "dt", "texts") {
		return nil, corruptf("%s row data has unexpected keys", typ)
	}
	for _, k := range []string{"turn", "step", "index"} {
		if !isNumber(d[k]) {
			return nil, corruptf("%s row %s is not a number", typ, k)
		}
	}
	payload, ok := array(d[payloadKey])
	if !ok || len(payload) == 0 {
		return nil, corruptf("%s row %s is not a non-empty array", typ, payloadKey)
	}
	for _, p := range payload {
		if jsonKind(p) != '"' {
			return nil, corruptf("%s row %s holds a non-string", typ, payloadKey)
		}
	}
	dt, ok := array(d["dt"])
	if !ok || len(dt) != len(payload)-1 {
		return nil, corruptf("%s row dt length does not match its payload", typ)
	}
	if seq0+int64(len(payload))-1 > maxSafeInteger {
		return nil, corruptf("%s row seq range is not safe", typ)
	}
	chunkType := map[string]string{rowText: "text-delta", rowReasoning: "reasoning-delta", rowToolCall: "tool-call-delta"}[typ]
	turn, step, index := compact(d["turn"]), compact(d["step"]), compact(d["index"])
	events := make([]Event, len(payload))
	t := time0
	for i, p := range payload {
		if i > 0 {
			delta, ok := safeInt(dt[i-1])
			if !ok {
				return nil, corruptf("%s row dt holds a non-safe-integer", typ)
			}
			t += delta
			if t > maxSafeInteger || t < -maxSafeInteger {
				return nil, corruptf("%s row time is not safe", typ)
			}
		}
		chunk := newObj().str("type", chunkType).raw("index", index)
		if typ == rowToolCall {
			chunk.raw("id", compact(d["id"]))
			if name, ok := d["name"]; ok {
				chunk.raw("name", compact(name))
			}
			chunk.raw("argumentsDelta", compact(p))
		} else {
			chunk.raw("text", compact(p))
		}
		data := newObj().raw("turn", turn).raw("step", step).raw("chunk", chunk.bytes()).bytes()
		events[i] = Event{Type: "assistant/chunk", Seq: seq0 + int64(i), Time: t, Data: data}
	}
	return events, nil
}

// compact returns v without insignificant whitespace.
func compact(v json.RawMessage) json.RawMessage {
	if bytes.IndexAny(v, " \t\r\n") < 0 {
		return v
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return v
	}
	return buf.Bytes()
}
