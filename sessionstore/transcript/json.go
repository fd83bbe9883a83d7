package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dsh-lsp/dsh-lsp/internal/binenc"
	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// obj is a JSON object read with the semantics of JS property access on
// JSON.parse output: from the members a jsjson tape recorded while
// validating its record (no walk), or, for an object off the tape (built
// here, or nested too deep), from its raw bytes, which are not an object
// unless they start with '{'.
type obj struct {
	raw []byte
	t   *tape
	// first is the index of its first member on the tape (-1: none);
	// onTape says whether the tape holds it.
	first  int32
	onTape bool
}

// tape is a record's line (Text) and the entries its validation recorded.
type tape struct{ jsjson.Tape }

func (t *tape) key(k int32) []byte   { return t.Entries[k].Key(t.Text) }
func (t *tape) value(k int32) []byte { return t.Entries[k].Value(t.Text) }

// rawObj is the object b, off the tape.
func rawObj(b []byte) obj { return obj{raw: b, first: -1} }

// obj is the object value of entry k, on the tape when it holds it.
func (t *tape) obj(k int32) obj {
	v, sub := t.value(k), t.Entries[k].Sub
	if sub < 0 || v[0] != '{' {
		return rawObj(v)
	}
	if sub == 0 { // empty
		sub = -1
	}
	return obj{raw: v, t: t, first: sub, onTape: true}
}

// elems is elements(t.value(k), fn), from the tape when it holds that
// array; fn also gets each element as an object.
func (t *tape) elems(k int32, fn func(v []byte, sub obj)) bool {
	v, sub := t.value(k), t.Entries[k].Sub
	if sub < 0 || v[0] != '[' {
		return elements(v, func(v []byte) { fn(v, rawObj(v)) })
	}
	for e := sub; sub > 0 && e >= 0; e = t.Entries[e].Next {
		fn(t.value(e), t.obj(e))
	}
	return true
}

// each calls fn with each member of o (key decoded) in document order;
// false when o is not an object.
func (o obj) each(fn func(key string, v []byte)) bool {
	return o.eachAt(func(k string, v []byte, _ int32) { fn(k, v) })
}

// eachAt is each that also passes each member's tape index (-1 when o is
// off the tape).
func (o obj) eachAt(fn func(key string, v []byte, at int32)) bool {
	if !o.onTape {
		if len(o.raw) == 0 || o.raw[0] != '{' {
			return false
		}
		return jsjson.Members(o.raw, func(k, v []byte) { fn(keyString(k), v, -1) }) == nil
	}
	for k := o.first; k >= 0; k = o.t.Entries[k].Next {
		fn(keyString(o.t.key(k)), o.t.value(k), k)
	}
	return true
}

// at is the value of o's member at tape index k (-1: off the tape, v) as
// an object, from the tape when it holds that object.
func (o obj) at(k int32, v []byte) obj {
	if k < 0 {
		return rawObj(v)
	}
	return o.t.obj(k)
}

// keyString decodes a key literal, viewing it when it has no escape.
func keyString(key []byte) string {
	k := key[1 : len(key)-1]
	if bytes.IndexByte(k, '\\') >= 0 {
		s, _ := jsjson.String(key)
		return s
	}
	return binenc.Alias(k)
}

// member returns the tape index of the last member named name (as JS
// property access reads it), -1 when none or o is off the tape.
func (o obj) member(name string) int32 {
	found := int32(-1)
	for k := o.first; o.onTape && k >= 0; k = o.t.Entries[k].Next {
		if jsjson.KeyIs(o.t.key(k), name) {
			found = k
		}
	}
	return found
}

// get returns the raw value of o's last member named name, or nil.
func (o obj) get(name string) []byte {
	if k := o.member(name); k >= 0 {
		return o.t.value(k)
	}
	if o.onTape || len(o.raw) == 0 || o.raw[0] != '{' {
		return nil
	}
	return jsjson.ObjectField(o.raw, name)
}

// sub is rawObj(o.get(name)), from the tape when it holds that object.
func (o obj) sub(name string) obj {
	if k := o.member(name); k >= 0 {
		return o.t.obj(k)
	}
	return rawObj(o.get(name))
}

// elems is elements(o.get(name), fn), from the tape when it holds that
// array; fn also gets each element as an object.
func (o obj) elems(name string, fn func(v []byte, sub obj)) bool {
	if k := o.member(name); k >= 0 {
		return o.t.elems(k, fn)
	}
	return elements(o.get(name), func(v []byte) { fn(v, rawObj(v)) })
}

// valid reports whether o is an object.
func (o obj) valid() bool {
	return o.onTape || o.each(func(string, []byte) {})
}

// hasExactKeys reports whether o is an object with exactly the given
// keys (at most 8).
func (o obj) hasExactKeys(keys ...string) bool {
	v, other, ok := o.pick(keys...)
	for i := range keys {
		ok = ok && v[i] != nil
	}
	return ok && !other
}

// pick returns the raw values of o's members named by names (at most 8;
// nil when absent; the last duplicate wins, an array so nothing is
// allocated); other reports a member of another name, ok false that o is
// not an object.
func (o obj) pick(names ...string) (vals [8][]byte, other, ok bool) {
	ok = o.each(func(k string, v []byte) {
		for i, n := range names {
			if k == n {
				vals[i] = v
				return
			}
		}
		other = true
	})
	return vals, other, ok
}

// elements calls fn with each element of array b; false when not an array.
func elements(b []byte, fn func(v []byte)) bool {
	ok, err := jsjson.Elements(b, fn)
	return ok && err == nil
}

// parseReplaceOp parses a replace surfaceOp: exactly op "replace" and
// non-negative safe-integer start and end.
func parseReplaceOp(op json.RawMessage) (start, end int64, ok bool) {
	v, other, isObject := rawObj(op).pick("op", "start", "end")
	if name, _ := strView(v[0]); !isObject || other || name != "replace" {
		return 0, 0, false
	}
	start, okS := nonNegSafeInt(v[1])
	end, okE := nonNegSafeInt(v[2])
	return start, end, okS && okE
}

// canonMode is how canonJSON blanks a value on the way.
type canonMode int

const (
	canonPlain canonMode = iota
	// blankResultContent: tool/result data, whose
	// message.content[0].content becomes null (spec §5.1 rule 6).
	blankResultContent
	canonMessage
	canonOneBlock
	canonBlock
)

// canonJSON appends a canonical encoding of the JSON value v, the same
// exactly for values equal as parsed JSON (key sets, numbers as float64).
func canonJSON(dst []byte, v []byte, mode canonMode) ([]byte, bool) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return dst, false
	}
	switch c := v[0]; {
	case c == '{':
		return canonObject(dst, rawObj(v), mode)
	case c == '[':
		return canonArray(dst, v, nil, -1, mode)
	case c == '"':
		s, ok := strView(v)
		if !ok {
			return dst, false
		}
		return appendQuote(append(dst, 's'), s), true
	case c == 't' || c == 'f' || c == 'n':
		return append(dst, v...), true
	}
	f, ok := number(v)
	if !ok || math.IsInf(f, 0) { // out of float64's range
		return dst, false
	}
	if f == 0 {
		f = 0 // -0 equals 0
	}
	return strconv.AppendFloat(append(dst, '#'), f, 'g', -1, 64), true
}

// appendQuote is strconv.AppendQuote, which decodes s rune by rune: the
// keys and most strings a digest quotes are printable ASCII, which it
// quotes as they are (a tenth of a tool result's digest).
func appendQuote(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' || c == '"' || c == '\\' {
			return strconv.AppendQuote(dst, s)
		}
	}
	return append(append(append(dst, '"'), s...), '"')
}

// member is one member of an object being canonicalised; at is its tape
// index (-1: none).
type member struct {
	key string
	val []byte
	at  int32
}

// canonObject is canonJSON for an object. Its objects and arrays are read
// from the tape as deep as it holds them: a tool result's content, which
// the digest blanks, is then not walked at all.
func canonObject(dst []byte, o obj, mode canonMode) ([]byte, bool) {
	var buf [8]member
	ms := buf[:0]
	if !o.eachAt(func(k string, val []byte, at int32) {
		ms = append(ms, member{k, val, at})
	}) {
		return dst, false
	}
	slices.SortStableFunc(ms, func(a, b member) int { return strings.Compare(a.key, b.key) })
	out := ms[:0]
	for i := range ms {
		if i+1 < len(ms) && ms[i+1].key == ms[i].key {
			continue
		}
		out = append(out, ms[i])
	}
	if mode == canonBlock {
		out = blankContent(out)
	}
	dst = append(dst, '{')
	for _, m := range out {
		dst = appendQuote(dst, m.key)
		dst = append(dst, ':')
		var ok bool
		switch sub := memberMode(mode, m.key); {
		case jsonKind(m.val) == '{':
			dst, ok = canonObject(dst, o.at(m.at, m.val), sub)
		case m.at >= 0 && jsonKind(m.val) == '[':
			dst, ok = canonArray(dst, m.val, o.t, m.at, sub)
		default:
			dst, ok = canonJSON(dst, m.val, sub)
		}
		if !ok {
			return dst, false
		}
		dst = append(dst, ',')
	}
	return append(dst, '}'), true
}

// blankContent sets a block's content member to null, adding it.
func blankContent(ms []member) []member {
	i, found := slices.BinarySearchFunc(ms, "content", func(m member, k string) int { return strings.Compare(m.key, k) })
	if found {
		ms[i].val, ms[i].at = []byte("null"), -1
		return ms
	}
	return slices.Insert(ms, i, member{key: "content", val: []byte("null"), at: -1})
}

// memberMode is the mode of member key of an object canonicalised in mode.
func memberMode(mode canonMode, key string) canonMode {
	switch {
	case mode == blankResultContent && key == "message":
		return canonMessage
	case mode == canonMessage && key == "content":
		return canonOneBlock
	}
	return canonPlain
}

// canonArray is canonJSON for the array v, read from the tape t when it
// holds it at index at.
func canonArray(dst, v []byte, t *tape, at int32, mode canonMode) ([]byte, bool) {
	type elem struct {
		v   []byte
		sub obj
	}
	var buf [8]elem
	elems := buf[:0]
	collect := func(e []byte, sub obj) { elems = append(elems, elem{e, sub}) }
	var ok bool
	if t != nil && at >= 0 {
		ok = t.elems(at, collect)
	} else {
		ok = elements(v, func(e []byte) { collect(e, rawObj(e)) })
	}
	if !ok {
		return dst, false
	}
	sub := canonPlain
	if mode == canonOneBlock && len(elems) == 1 && elems[0].v[0] == '{' {
		sub = canonBlock
	}
	dst = append(dst, '[')
	for _, e := range elems {
		if e.v[0] == '{' {
			dst, ok = canonObject(dst, e.sub, sub)
		} else {
			dst, ok = canonJSON(dst, e.v, sub)
		}
		if !ok {
			return dst, false
		}
		dst = append(dst, ',')
	}
	return append(dst, ']'), true
}

// maxSafeInteger is JS Number.MAX_SAFE_INTEGER.
const maxSafeInteger = 1<<53 - 1

// parseObj validates b as one JSON object and returns it, with its
// members on a tape unless it has too many entries for one.
func parseObj(b []byte) (obj, bool) {
	entries, held, ok, _ := jsjson.CheckObjectTape(b, nil)
	raw := bytes.TrimSpace(b)
	switch {
	case !ok:
		return obj{}, false
	case !held:
		return rawObj(raw), true
	case len(entries) == 0:
		return obj{raw: raw, first: -1, onTape: true}, true
	}
	return obj{raw: raw, t: &tape{jsjson.Tape{Text: b, Entries: entries}}, first: 0, onTape: true}, true
}

// jsonKind returns the first significant byte of a raw JSON value.
func jsonKind(v json.RawMessage) byte {
	for _, c := range v {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c
	}
	return 0
}

func isNumber(v json.RawMessage) bool {
	c := jsonKind(v)
	return c == '-' || (c >= '0' && c <= '9')
}

// number returns a JSON number's float64 value.
func number(v json.RawMessage) (float64, bool) {
	if n, ok := shortInt(v); ok {
		return float64(n), true
	}
	if !isNumber(v) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(v)), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return f, true
}

// shortInt reads a number of at most 15 digits without a sign, fraction
// or exponent, the form of nearly every number in a transcript (seqs,
// counts, millisecond times), without strconv.ParseFloat, which was a tenth
// of the first index pass's CPU. Such integers are exact in a float64, so
// the result is ParseFloat's.
func shortInt(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// safeInt returns v when JS Number.isSafeInteger accepts it.
func safeInt(v json.RawMessage) (int64, bool) {
	if n, ok := shortInt(v); ok { // at most 15 digits: below 2^53
		return n, true
	}
	f, ok := number(v)
	if !ok || math.IsInf(f, 0) || f != math.Trunc(f) || math.Abs(f) > maxSafeInteger {
		return 0, false
	}
	return int64(f), true
}

// nonNegSafeInt is safeInt restricted to n >= 0.
func nonNegSafeInt(v json.RawMessage) (int64, bool) {
	n, ok := safeInt(v)
	return n, ok && n >= 0
}

// str returns v when it is a JSON string, lone surrogates as WTF-8 (as
// JSON.parse keeps them).
func str(v json.RawMessage) (string, bool) {
	return jsjson.StrictString(bytes.TrimSpace(v))
}

// strView is str for a caller that only looks at the string: a literal
// without escapes, control characters or invalid UTF-8 (nearly all) is
// viewed in place, not copied, so the string must not outlive v.
func strView(v json.RawMessage) (string, bool) {
	v = bytes.TrimSpace(v)
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' && jsjson.PlainBody(v[1:len(v)-1]) {
		return binenc.Alias(v[1 : len(v)-1]), true
	}
	return str(v)
}

// nonEmptyStr is strView for a non-empty string.
func nonEmptyStr(v json.RawMessage) (string, bool) {
	s, ok := strView(v)
	return s, ok && s != ""
}

func isObject(v json.RawMessage) bool { return jsonKind(v) == '{' }
func isArray(v json.RawMessage) bool  { return jsonKind(v) == '[' }

// orderedKeys returns the keys of a raw JSON object in document order,
// each once, so that rewritten objects keep JS key order.
func orderedKeys(v json.RawMessage) []string {
	var keys []string
	seen := map[string]bool{}
	rawObj(bytes.TrimSpace(v)).each(func(k string, _ []byte) {
		if !seen[k] {
			k = strings.Clone(k)
			seen[k] = true
			keys = append(keys, k)
		}
	})
	return keys
}
