package sessionstore

import "bytes"

// rowMembers validates a packed chunk row exactly as expandRow does and
// returns its member count and seq0, without building the member events:
// the index only needs to count them (assistant/chunk events are log-only
// and carry nothing the index keeps). ok is false for anything expandRow
// would reject; callers then take the full path, which reports it.
// TestRowMembersAgreesWithExpandRow keeps the two in step.
func rowMembers(typ string, o object) (n int, seq0, last int64, ok bool) {
	if !hasExactKeys(o, "type", "seq0", "time0", "data") {
		return 0, 0, 0, false
	}
	seq0, ok = nonNegSafeInt(o["seq0"])
	if !ok {
		return 0, 0, 0, false
	}
	time0, ok := safeInt(o["time0"])
	if !ok {
		return 0, 0, 0, false
	}
	d, ok := parseObject(o["data"])
	if !ok {
		return 0, 0, 0, false
	}
	payloadKey := "texts"
	if typ == rowToolCall {
		payloadKey = "args"
		_, hasName := d["name"]
		if hasName && !hasExactKeys(d, "turn", "step", "index", "id", "name", "dt", "args") ||
			!hasName && !hasExactKeys(d, "turn", "step", "index", "id", "dt", "args") {
			return 0, 0, 0, false
		}
		if _, ok := str(d["id"]); !ok {
			return 0, 0, 0, false
		}
		if hasName {
			if _, ok := str(d["name"]); !ok {
				return 0, 0, 0, false
			}
		}
	} else if !hasExactKeys(d, "turn", "step", "index", "dt", "texts") {
		return 0, 0, 0, false
	}
	for _, k := range []string{"turn", "step", "index"} {
		if !isNumber(d[k]) {
			return 0, 0, 0, false
		}
	}
	payload, ok := array(d[payloadKey])
	if !ok || len(payload) == 0 {
		return 0, 0, 0, false
	}
	for _, p := range payload {
		if jsonKind(p) != '"' {
			return 0, 0, 0, false
		}
	}
	dt, ok := array(d["dt"])
	if !ok || len(dt) != len(payload)-1 {
		return 0, 0, 0, false
	}
	if seq0+int64(len(payload))-1 > maxSafeInteger {
		return 0, 0, 0, false
	}
	t := time0
	for _, v := range dt {
		delta, ok := safeInt(v)
		if !ok {
			return 0, 0, 0, false
		}
		t += delta
		if t > maxSafeInteger || t < -maxSafeInteger {
			return 0, 0, 0, false
		}
	}
	return len(payload), seq0, t, true
}

var rowPrefixes = [][]byte{
	[]byte(`{"type":"text-chunks"`), []byte(`{"type":"reasoning-chunks"`), []byte(`{"type":"tool-call-chunks"`),
}

// feedRow takes a packed row line off the line scanner's hands when it is
// well-formed and continues the seq sequence: the scanner's NextSeq and
// line count advance as Feed would advance them. It returns the member
// count, the first seq and the last member's time; ok is false to let Feed
// handle the line (not a row, malformed, or out of sequence).
func feedRow(sc *LineScanner, line []byte) (n, seq0, last int64, ok bool) {
	if sc.Bad() || len(line) < 20 || line[0] != '{' {
		return 0, 0, 0, false
	}
	isRow := false
	for _, p := range rowPrefixes {
		if bytes.HasPrefix(line, p) {
			isRow = true
			break
		}
	}
	if !isRow {
		return 0, 0, 0, false
	}
	o, ok := parseObject(validUTF8(line))
	if !ok {
		return 0, 0, 0, false
	}
	typ, ok := str(o["type"])
	if !ok || typ != rowText && typ != rowReasoning && typ != rowToolCall {
		return 0, 0, 0, false
	}
	m, seq0, last, ok := rowMembers(typ, o)
	if !ok || seq0 != sc.NextSeq {
		return 0, 0, 0, false
	}
	sc.lines++
	sc.NextSeq += int64(m)
	return int64(m), seq0, last, true
}
