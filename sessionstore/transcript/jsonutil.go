package transcript

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

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

// orderedKeys returns the keys of a raw JSON object in document order
// (Go maps lose it), so that rewritten objects keep JS key order.
func orderedKeys(v json.RawMessage) []string {
	dec := json.NewDecoder(bytes.NewReader(v))
	t, err := dec.Token()
	if err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		k, _ := t.(string)
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return keys
		}
	}
	return keys
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
