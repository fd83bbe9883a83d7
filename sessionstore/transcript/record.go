package transcript

import (
	"bytes"
	"encoding/json"
	"strings"
	"unsafe"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// Event is one session event, after packed-row expansion (and, once
// folded, the legacy upgrade of spec §2.9).
type Event struct {
	Type string
	Seq  int64
	Time int64
	// Data is the event's data value (raw JSON, never empty).
	Data json.RawMessage
	// SourceEventSeqs and SurfaceOp are the raw envelope values, or nil.
	SourceEventSeqs json.RawMessage
	SurfaceOp       json.RawMessage
	Ignorable       bool
	// opFirst writes surfaceOp before sourceEventSeqs (dsh's closers).
	opFirst bool
	// env is the stored envelope, nil for events made here.
	env *envelope
}

// data is Data as an object: from the record's tape while Data is the
// stored record's data, else from Data's bytes.
func (e *Event) data() obj {
	if e.env != nil && e.env.dataAt >= 0 && sameBytes(e.Data, e.env.data) {
		return e.env.dataObj()
	}
	return rawObj(e.Data)
}

// Tape is the tape of the record e was read from while e.Data is that
// record's data, which lies in it (for reference.SurfaceItemOf); nil for
// an event made here, rewritten, or read without a tape. Like e.Data, it
// is valid until the cursor reads on.
func (e *Event) Tape() *jsjson.Tape {
	if e.env != nil && e.env.dataAt >= 0 && sameBytes(e.Data, e.env.data) {
		return &e.env.tape.Tape
	}
	return nil
}

// sameBytes reports whether a and b are the same bytes in memory.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && unsafe.SliceData(a) == unsafe.SliceData(b)
}

// MarshalJSON writes the event object as dsh stores and returns it.
func (e Event) MarshalJSON() ([]byte, error) { return e.AppendJSON(nil), nil }

// AppendJSON appends the event as MarshalJSON writes it.
func (e Event) AppendJSON(dst []byte) []byte {
	w := jsjson.NewObject(dst)
	w.String("type", e.Type).Int("seq", e.Seq).Int("time", e.Time).Raw("data", e.Data)
	if e.SurfaceOp != nil && e.opFirst {
		w.Raw("surfaceOp", e.SurfaceOp)
	}
	if e.SourceEventSeqs != nil {
		w.Raw("sourceEventSeqs", e.SourceEventSeqs)
	}
	if e.SurfaceOp != nil && !e.opFirst {
		w.Raw("surfaceOp", e.SurfaceOp)
	}
	if e.Ignorable {
		w.Raw("ignorable", []byte("true"))
	}
	return w.Bytes()
}

// Packed chunk row tags (spec §2.4).
const (
	rowText      = "text-chunks"
	rowReasoning = "reasoning-chunks"
	rowToolCall  = "tool-call-chunks"
)

// Top-level keys of a storage record the envelope keeps, as bits of
// envelope.keys.
const (
	keyType uint16 = 1 << iota
	keySeq
	keyTime
	keyData
	keySurfaceOp
	keySourceEventSeqs
	keyIgnorable
	keySeq0
	keyTime0
)

// envelope is a storage record's top level: the raw value of each known
// key (the last duplicate wins, as in JS), which are present, and the
// first other key. Its tape holds the entries of the record's objects and
// arrays, recorded while validating it: dataObj reads data from it.
type envelope struct {
	typ, seq, time, data, surfaceOp, sourceEventSeqs, ignorable, seq0, time0 []byte
	keys                                                                     uint16
	extra                                                                    string
	hasExtra                                                                 bool
	// typeOK, seqOK and timeOK are decodeRecord's reading of typ (a
	// string), seq (a non-negative safe integer) and time (a safe
	// integer), which checkEnvelope asserts.
	typeOK, seqOK, timeOK bool
	tape                  tape
	// dataAt and seqsAt are the tape indexes of the data and
	// sourceEventSeqs members (-1: none, or no tape).
	dataAt, seqsAt int32
}

// scan validates line as a JSON object and reads its envelope into env,
// aliasing line (or, for invalid UTF-8, its copy repaired as a WHATWG
// TextDecoder does) and reusing env's tape.
func (env *envelope) scan(line []byte) bool {
	entries, held, ok, utf8OK := jsjson.CheckObjectTape(line, env.tape.Entries)
	if ok && !utf8OK {
		line = jsjson.RepairUTF8(line)
		entries, held, ok, _ = jsjson.CheckObjectTape(line, entries)
	}
	held = held && !readBytes
	if !held {
		entries = entries[:0] // kept for the next line
	}
	// The line is valid UTF-8 now, as read or repaired.
	*env = envelope{tape: tape{jsjson.Tape{Text: line, Entries: entries, UTF8: true}}, dataAt: -1, seqsAt: -1}
	switch t := &env.tape; {
	case !ok:
		return false
	case !held: // too many entries for a tape: the top level is walked
		jsjson.Members(line, func(key, v []byte) { env.member(key, v, -1) })
	case len(entries) > 0:
		for k := int32(0); k >= 0; k = entries[k].Next {
			env.member(t.key(k), t.value(k), k)
		}
	}
	return true
}

// member reads the top-level member key: v, at tape index at. A literal
// that is one of the envelope's names is that name; only another one is
// decoded (an escape may spell a name): looking for an escape in every
// key was 1.3 % of a first pass.
func (env *envelope) member(key, v []byte, at int32) {
	if env.known(key[1:len(key)-1], v, at) {
		return
	}
	if name := keyString(key); !env.known([]byte(name), v, at) && !env.hasExtra {
		env.extra, env.hasExtra = strings.Clone(name), true
	}
}

// known reads v as the member name if that is an envelope name.
func (env *envelope) known(name, v []byte, at int32) bool {
	var dst *[]byte
	var bit uint16
	switch string(name) {
	case "type":
		dst, bit = &env.typ, keyType
	case "seq":
		dst, bit = &env.seq, keySeq
	case "time":
		dst, bit = &env.time, keyTime
	case "data":
		dst, bit, env.dataAt = &env.data, keyData, at
	case "surfaceOp":
		dst, bit = &env.surfaceOp, keySurfaceOp
	case "sourceEventSeqs":
		dst, bit, env.seqsAt = &env.sourceEventSeqs, keySourceEventSeqs, at
	case "ignorable":
		dst, bit = &env.ignorable, keyIgnorable
	case "seq0":
		dst, bit = &env.seq0, keySeq0
	case "time0":
		dst, bit = &env.time0, keyTime0
	default:
		return false
	}
	*dst, env.keys = v, env.keys|bit
	return true
}

// readBytes makes every read walk the record's bytes, as a record too big
// for a tape is read: the tests compare the tape view against it.
var readBytes bool

// dataObj is the record's data object (on the tape).
func (env *envelope) dataObj() obj {
	if env.dataAt < 0 {
		return rawObj(env.data)
	}
	return env.tape.obj(env.dataAt)
}

// decodeEvents decodes one storage record: an event, or a packed chunk
// row's assistant/chunk events, aliasing line. Only what the scanner
// needs is checked (the fold validates); an error means a bad record.
func decodeEvents(line []byte) ([]Event, error) {
	evs, _, err := decodeRecord(nil, line, true, &envelope{})
	return evs, err
}

// RowSummary is what the fold needs of a packed row it does not expand:
// the count, first seq and last time of its log-only members.
type RowSummary struct {
	N, Seq0, Last int64
}

// decodeRecord is decodeEvents appending to dst, reading the record into
// env (which its events then point to); with expand false a well-formed
// packed row is returned as a summary instead. On error dst is returned
// as it came.
func decodeRecord(dst []Event, line []byte, expand bool, env *envelope) ([]Event, RowSummary, error) {
	if !env.scan(line) {
		return dst, RowSummary{}, Corruptf("record is not a JSON object")
	}
	// A non-string type is refused later, like any unknown type.
	typ, typeOK := eventType(env.typ)
	switch typ {
	case rowText, rowReasoning, rowToolCall:
		r := packedRow{typ: typ, keep: expand}
		if err := r.parse(env); err != nil {
			return dst, RowSummary{}, err
		}
		if !expand {
			return dst, RowSummary{N: int64(r.n), Seq0: r.seq0, Last: r.last}, nil
		}
		return r.expand(dst), RowSummary{}, nil
	}
	ev := Event{Type: typ, env: env, Data: env.data, SourceEventSeqs: env.sourceEventSeqs, SurfaceOp: env.surfaceOp}
	var ok bool
	if ev.Seq, ok = safeInt(env.seq); !ok {
		return dst, RowSummary{}, Corruptf("event %s has no integer seq", jsjson.Quote(typ))
	}
	ev.Time, env.timeOK = safeInt(env.time)
	env.typeOK, env.seqOK = typeOK, ev.Seq >= 0
	ev.Ignorable = string(env.ignorable) == "true"
	return append(dst, ev), RowSummary{}, nil
}

// eventType is str(v) for a record's type, without copying the name of a
// type dsh writes (it is interned).
func eventType(v []byte) (string, bool) {
	if len(v) > 2 && v[0] == '"' && v[len(v)-1] == '"' {
		name := v[1 : len(v)-1]
		for _, t := range typeNames[typeSlot(name)] {
			if string(name) == t.name {
				return t.name, true
			}
		}
	}
	return str(v)
}

// knownType reports whether t is one of knownEventTypes.
func knownType(t string) bool {
	for _, e := range typeNames[typeSlot(t)] {
		if t == e.name {
			return e.known
		}
	}
	return false
}

// typeName is an interned type name; known says it is in knownEventTypes
// (else it is a packed row type).
type typeName struct {
	name  string
	known bool
}

// typeNames interns the known event types and the packed row types in
// slots by typeSlot: a map lookup per record was 7 % of its decoding, and
// the fold's known-type check looked the type up again.
var typeNames = func() (slots [typeSlots][]typeName) {
	for t := range knownEventTypes {
		slots[typeSlot(t)] = append(slots[typeSlot(t)], typeName{t, true})
	}
	for _, t := range []string{rowText, rowReasoning, rowToolCall} {
		slots[typeSlot(t)] = append(slots[typeSlot(t)], typeName{t, false})
	}
	return slots
}()

const typeSlots = 128

// typeSlot hashes a type name's length and three of its bytes.
func typeSlot[S string | []byte](s S) int {
	if len(s) == 0 {
		return 0
	}
	return (7*len(s) + int(s[0]) + 3*int(s[len(s)-1]) + 5*int(s[len(s)/2])) % typeSlots
}

// packedRow is a validated packed chunk row (spec §2.4).
type packedRow struct {
	typ                   string
	seq0, time0, last     int64
	turn, step, index, id []byte
	name                  []byte
	hasName               bool
	// n counts the payload; with keep (a row to expand) the payload and
	// the time deltas are kept too.
	n       int
	keep    bool
	payload [][]byte
	dt      []int64
}

// parse validates a packed row as dsh's chunk-row decoder does (§2.4).
func (r *packedRow) parse(env *envelope) error {
	if env.keys != keyType|keySeq0|keyTime0|keyData || env.hasExtra {
		return Corruptf("%s row has unexpected keys", r.typ)
	}
	var ok bool
	if r.seq0, ok = nonNegSafeInt(env.seq0); !ok {
		return Corruptf("%s row seq0 is not a non-negative safe integer", r.typ)
	}
	if r.time0, ok = safeInt(env.time0); !ok {
		return Corruptf("%s row time0 is not a safe integer", r.typ)
	}
	data := env.dataObj()
	if err := r.readData(data); err != nil {
		return err
	}
	if err := r.readPayload(data); err != nil {
		return err
	}
	return r.readTimes(data)
}

// rowKeys are the data keys of a packed row.
var rowKeys = [...]string{"turn", "step", "index", "id", "name", "dt", "texts", "args"}

// readData checks the row's data keys and fields.
func (r *packedRow) readData(data obj) error {
	d, other, ok := data.pick(rowKeys[:]...)
	if !ok {
		return Corruptf("%s row data is not an object", r.typ)
	}
	r.turn, r.step, r.index, r.id, r.name = d[0], d[1], d[2], d[3], d[4]
	call := r.typ == rowToolCall
	r.hasName = call && r.name != nil
	// The keys of rowKeys a row of its type has: name is optional.
	want := [len(rowKeys)]bool{true, true, true, call, r.hasName, true, !call, call}
	for i, has := range want {
		other = other || (d[i] != nil) != has
	}
	if other {
		return Corruptf("%s row data has unexpected keys", r.typ)
	}
	if err := r.checkCall(); err != nil {
		return err
	}
	for i, k := range rowKeys[:3] {
		if !isNumber(d[i]) {
			return Corruptf("%s row %s is not a number", r.typ, k)
		}
	}
	return nil
}

// checkCall checks a tool-call row's id and optional name (strings).
func (r *packedRow) checkCall() error {
	if r.typ != rowToolCall {
		return nil
	}
	if _, ok := strView(r.id); !ok {
		return Corruptf("%s row id is not a string", r.typ)
	}
	if _, ok := strView(r.name); r.hasName && !ok {
		return Corruptf("%s row name is not a string", r.typ)
	}
	return nil
}

// readPayload reads the row's texts (or args): non-empty, all strings.
func (r *packedRow) readPayload(data obj) error {
	key := "texts"
	if r.typ == rowToolCall {
		key = "args"
	}
	allStrings := true
	if !data.elems(key, func(p []byte, _ obj) {
		allStrings = allStrings && jsonKind(p) == '"'
		r.n++
		if r.keep {
			r.payload = append(r.payload, p)
		}
	}) || r.n == 0 {
		return Corruptf("%s row %s is not a non-empty array", r.typ, key)
	}
	if !allStrings {
		return Corruptf("%s row %s holds a non-string", r.typ, key)
	}
	return nil
}

// readTimes reads the row's dt and checks its members' seqs and times,
// reporting a bad length first, then an unsafe seq range, then the first
// bad delta.
func (r *packedRow) readTimes(data obj) error {
	n, t := 0, r.time0
	var bad error
	if !data.elems("dt", func(v []byte, _ obj) {
		n++
		if bad != nil {
			return
		}
		delta, ok := safeInt(v)
		if !ok {
			bad = Corruptf("%s row dt holds a non-safe-integer", r.typ)
			return
		}
		if t += delta; t > maxSafeInteger || t < -maxSafeInteger {
			bad = Corruptf("%s row time is not safe", r.typ)
			return
		}
		if r.keep {
			r.dt = append(r.dt, delta)
		}
	}) || n != r.n-1 {
		return Corruptf("%s row dt length does not match its payload", r.typ)
	}
	if r.seq0+int64(r.n)-1 > maxSafeInteger {
		return Corruptf("%s row seq range is not safe", r.typ)
	}
	if bad != nil {
		return bad
	}
	r.last = t
	return nil
}

// expand appends the row's assistant/chunk events to dst.
func (r *packedRow) expand(dst []Event) []Event {
	chunkType := map[string]string{rowText: "text-delta", rowReasoning: "reasoning-delta", rowToolCall: "tool-call-delta"}[r.typ]
	turn, step, index := Compact(r.turn), Compact(r.step), Compact(r.index)
	t := r.time0
	for i, p := range r.payload {
		if i > 0 {
			t += r.dt[i-1]
		}
		chunk := jsjson.NewObject(nil).String("type", chunkType).Raw("index", index)
		if r.typ == rowToolCall {
			chunk.Raw("id", Compact(r.id))
			if r.hasName {
				chunk.Raw("name", Compact(r.name))
			}
			chunk.Raw("argumentsDelta", Compact(p))
		} else {
			chunk.Raw("text", Compact(p))
		}
		data := jsjson.NewObject(nil).Raw("turn", turn).Raw("step", step).Raw("chunk", chunk.Bytes()).Bytes()
		dst = append(dst, Event{Type: "assistant/chunk", Seq: r.seq0 + int64(i), Time: t, Data: data})
	}
	return dst
}

// Compact returns v without insignificant whitespace.
func Compact(v json.RawMessage) json.RawMessage {
	if !bytes.ContainsAny(v, " \t\r\n") {
		return v
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return v
	}
	return buf.Bytes()
}
