package transcript

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// Raw views into the JSON of validated records, for the fold: no decoding
// into maps, no reflection. Every value handed to these helpers comes from
// a line that passed jsjson.CheckObject (or was built by this package), so
// the non-validating walkers of package jsjson apply. Semantics are those
// of JS property access on JSON.parse output: the last duplicate key wins.

// field returns the raw value of member name of object b (nil when b is
// not an object or has no such member).
func field(b []byte, name string) []byte {
	if len(b) == 0 || b[0] != '{' {
		return nil
	}
	return jsjson.ObjectField(b, name)
}

// fields calls fn with each member of object b in document order (key
// decoded, without quotes); it returns false when b is not an object.
func fields(b []byte, fn func(key string, v []byte)) bool {
	if len(b) == 0 || b[0] != '{' {
		return false
	}
	return jsjson.Members(b, func(key, v []byte) {
		k := key[1 : len(key)-1]
		if bytes.IndexByte(k, '\\') >= 0 {
			s, _ := jsjson.String(key)
			fn(s, v)
			return
		}
		fn(unsafeString(k), v)
	}) == nil
}

// elements calls fn with each element of array b; it returns false when b
// is not an array.
func elements(b []byte, fn func(v []byte)) bool {
	ok, err := jsjson.Elements(b, fn)
	return ok && err == nil
}

// isAppendOp reports whether a surfaceOp is the string "append",
// compared as written: an escaped spelling is not recognised.
func isAppendOp(op json.RawMessage) bool {
	return string(Compact(op)) == `"append"`
}

// parseReplaceOp parses a replace surfaceOp: an object with exactly the
// keys op, start and end, op "replace", start and end non-negative safe
// integers.
func parseReplaceOp(op json.RawMessage) (start, end int64, ok bool) {
	var opv, sv, ev []byte
	others := false
	if !fields(op, func(k string, v []byte) {
		switch k {
		case "op":
			opv = v
		case "start":
			sv = v
		case "end":
			ev = v
		default:
			others = true
		}
	}) || others || opv == nil || sv == nil || ev == nil {
		return 0, 0, false
	}
	if name, _ := str(opv); name != "replace" {
		return 0, 0, false
	}
	start, okS := nonNegSafeInt(sv)
	end, okE := nonNegSafeInt(ev)
	return start, end, okS && okE
}

// Canonical forms (canonJSON): how a value is blanked on the way.
type canonMode int

const (
	canonPlain canonMode = iota
	// blankResultContent: the value is tool/result data; its
	// message.content[0].content is replaced by null (spec §5.1 rule 6).
	blankResultContent
	canonMessage
	canonOneBlock
	canonBlock
)

// canonJSON appends a canonical encoding of the JSON value v: two values
// get the same encoding exactly when they are equal as parsed JSON
// (objects as key sets, the last duplicate winning; numbers as float64,
// -0 equal to 0; strings decoded). ok is false for malformed input.
func canonJSON(dst []byte, v []byte, mode canonMode) ([]byte, bool) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return dst, false
	}
	switch c := v[0]; {
	case c == '{':
		return canonObject(dst, v, mode)
	case c == '[':
		return canonArray(dst, v, mode)
	case c == '"':
		s, ok := jsjson.String(v)
		if !ok {
			return dst, false
		}
		return strconv.AppendQuote(append(dst, 's'), s), true
	case c == 't' || c == 'f' || c == 'n':
		return append(dst, v...), true
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		return dst, false
	}
	if f == 0 {
		f = 0 // -0 equals 0
	}
	return strconv.AppendFloat(append(dst, '#'), f, 'g', -1, 64), true
}

// member is one member of an object being canonicalised.
type member struct {
	key string
	val []byte
}

// canonObject is canonJSON for an object: its members sorted by key, the
// last duplicate kept.
func canonObject(dst, v []byte, mode canonMode) ([]byte, bool) {
	var ms []member
	if !fields(v, func(k string, val []byte) {
		ms = append(ms, member{strings.Clone(k), val})
	}) {
		return dst, false
	}
	slices.SortStableFunc(ms, func(a, b member) int { return compareStrings(a.key, b.key) })
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
		dst = strconv.AppendQuote(dst, m.key)
		dst = append(dst, ':')
		var ok bool
		if dst, ok = canonJSON(dst, m.val, memberMode(mode, m.key)); !ok {
			return dst, false
		}
		dst = append(dst, ',')
	}
	return append(dst, '}'), true
}

// blankContent sets a block's content member (sorted members) to null,
// adding it when absent.
func blankContent(ms []member) []member {
	i, found := slices.BinarySearchFunc(ms, "content", func(m member, k string) int { return compareStrings(m.key, k) })
	if found {
		ms[i].val = []byte("null")
		return ms
	}
	return slices.Insert(ms, i, member{"content", []byte("null")})
}

// memberMode is how the member key of an object canonicalised in mode is
// blanked: the path tool/result data → message → content[0].content.
func memberMode(mode canonMode, key string) canonMode {
	switch {
	case mode == blankResultContent && key == "message":
		return canonMessage
	case mode == canonMessage && key == "content":
		return canonOneBlock
	}
	return canonPlain
}

// canonArray is canonJSON for an array (the content of a message being
// blanked: its only block, when it has one object, is blanked).
func canonArray(dst, v []byte, mode canonMode) ([]byte, bool) {
	var elems [][]byte
	if !elements(v, func(e []byte) { elems = append(elems, e) }) {
		return dst, false
	}
	sub := canonPlain
	if mode == canonOneBlock && len(elems) == 1 && elems[0][0] == '{' {
		sub = canonBlock
	}
	dst = append(dst, '[')
	for _, e := range elems {
		var ok bool
		if dst, ok = canonJSON(dst, e, sub); !ok {
			return dst, false
		}
		dst = append(dst, ',')
	}
	return append(dst, ']'), true
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// unsafeString views b as a string without copying; the callee must not
// keep it beyond the call (fields' callbacks compare keys).
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// objectOf decodes a validated JSON object into its members (raw values,
// the last duplicate winning); ok is false when b is not an object.
func objectOf(b []byte) (object, bool) {
	b = bytes.TrimSpace(b)
	o := object{}
	if !fields(b, func(k string, v []byte) { o[strings.Clone(k)] = v }) {
		return nil, false
	}
	return o, true
}

// maxSafeInteger is JS Number.MAX_SAFE_INTEGER.
const maxSafeInteger = 1<<53 - 1

// object is a decoded JSON object whose values are kept raw.
type object map[string]json.RawMessage

// parseObject decodes b as a JSON object; ok is false when b is not valid
// JSON or not an object.
func parseObject(b []byte) (object, bool) {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 || b[0] != '{' {
		return nil, false
	}
	var o object
	if err := json.Unmarshal(b, &o); err != nil || o == nil {
		return nil, false
	}
	return o, true
}

// jsonKind returns the first significant byte of a raw JSON value: '{',
// '[', '"', 't', 'f', 'n' or a number start; 0 for an empty value.
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
	if !isNumber(v) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(v)), 64)
	if err != nil && !isRangeErr(err) {
		return 0, false
	}
	return f, true
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// safeInt returns v as an integer when it is a JSON number that JS
// Number.isSafeInteger accepts.
func safeInt(v json.RawMessage) (int64, bool) {
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

// str returns v as a string when it is a JSON string. Escaped lone UTF-16
// surrogates are kept as WTF-8 (see package reference), as JS JSON.parse
// keeps them, so such ids round-trip to the same path and URI.
func str(v json.RawMessage) (string, bool) {
	return jsjson.StrictString(bytes.TrimSpace(v))
}

func nonEmptyStr(v json.RawMessage) (string, bool) {
	s, ok := str(v)
	return s, ok && s != ""
}

func isObject(v json.RawMessage) bool { return jsonKind(v) == '{' }
func isArray(v json.RawMessage) bool  { return jsonKind(v) == '[' }

// hasExactKeys reports whether o has exactly the given keys.
func hasExactKeys(o object, keys ...string) bool {
	if len(o) != len(keys) {
		return false
	}
	for _, k := range keys {
		if _, ok := o[k]; !ok {
			return false
		}
	}
	return true
}

// orderedKeys returns the keys of a raw JSON object in document order,
// each once (Go maps lose the order), so that rewritten objects keep JS
// key order.
func orderedKeys(v json.RawMessage) []string {
	var keys []string
	seen := map[string]bool{}
	fields(bytes.TrimSpace(v), func(k string, _ []byte) {
		if !seen[k] {
			k = strings.Clone(k)
			seen[k] = true
			keys = append(keys, k)
		}
	})
	return keys
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
