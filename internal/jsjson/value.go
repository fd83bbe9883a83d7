package jsjson

import (
	"errors"
	"fmt"
	"strconv"
)

// syntaxError is a JSON.parse failure: what went wrong and the byte offset
// where it did.
type syntaxError struct {
	Msg    string
	Offset int
}

// Error returns "invalid JSON at byte <offset>: <what>".
func (e *syntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.Offset, e.Msg)
}

// Kind is the type of a parsed JSON value.
type Kind uint8

// The JSON value types.
const (
	KindNull Kind = iota
	KindBool
	KindNumber
	KindString
	KindArray
	KindObject
)

// String names the JSON type: null, boolean, number, string, array or object.
func (k Kind) String() string {
	switch k {
	case KindNull:
		return "null"
	case KindBool:
		return "boolean"
	case KindNumber:
		return "number"
	case KindString:
		return "string"
	case KindArray:
		return "array"
	}
	return "object"
}

// Value is a JSON value parsed the way JS JSON.parse builds it: strings are
// WTF-8 (lone surrogate escapes survive), numbers are float64, and an object
// keeps its keys in first-insertion order with the last value of a
// duplicated key.
type Value struct {
	Kind Kind
	Bool bool
	Num  float64
	Str  string
	// Items holds an array's items, or an object's values parallel to Keys.
	Items []*Value
	Keys  []string
}

// Field returns the value of key in an object, or nil (also when v is nil
// or not an object).
func (v *Value) Field(key string) *Value {
	if v == nil || v.Kind != KindObject {
		return nil
	}
	for i, k := range v.Keys {
		if k == key {
			return v.Items[i]
		}
	}
	return nil
}

// Parse parses one complete JSON text (surrounding JSON whitespace allowed)
// with JSON.parse semantics, at most 10,000 levels deep so hostile input
// cannot exhaust the stack. JS reads the bytes with the WHATWG decoder
// first: callers holding raw bytes pass RepairUTF8(b); strings are decoded
// by the one string decoder (String), so ill-formed UTF-8 left in b is
// repaired the same way. A malformed text gives an error naming what is
// wrong and its byte offset.
func Parse(b []byte) (*Value, error) {
	p := parser{b: b}
	p.pos = SkipSpace(b, 0)
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if p.pos = SkipSpace(b, p.pos); p.pos != len(b) {
		return nil, p.errorf("unexpected data after the JSON value")
	}
	return v, nil
}

type parser struct {
	b   []byte
	pos int
}

func (p *parser) errorf(format string, args ...any) error {
	return &syntaxError{Msg: fmt.Sprintf(format, args...), Offset: p.pos}
}

func (p *parser) literal(lit string) bool {
	if len(p.b)-p.pos >= len(lit) && string(p.b[p.pos:p.pos+len(lit)]) == lit {
		p.pos += len(lit)
		return true
	}
	return false
}

func (p *parser) value(depth int) (*Value, error) {
	if depth > maxDepth {
		return nil, p.errorf("nesting deeper than %d", maxDepth)
	}
	if p.pos >= len(p.b) {
		return nil, p.errorf("unexpected end of input")
	}
	switch c := p.b[p.pos]; {
	case c == '"':
		s, next, err := parseString(p.b, p.pos)
		if err != nil {
			return nil, err
		}
		p.pos = next
		return &Value{Kind: KindString, Str: s}, nil
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case p.literal("true"):
		return &Value{Kind: KindBool, Bool: true}, nil
	case p.literal("false"):
		return &Value{Kind: KindBool}, nil
	case p.literal("null"):
		return &Value{Kind: KindNull}, nil
	default:
		return nil, p.errorf("unexpected character %q", c)
	}
}

// next skips whitespace after a member or item and consumes the separator
// or the closing byte; it reports whether the container ended.
func (p *parser) next(closing byte, what string) (end bool, err error) {
	p.pos = SkipSpace(p.b, p.pos)
	if p.pos >= len(p.b) {
		return false, p.errorf("unexpected end of input in %s", what)
	}
	switch p.b[p.pos] {
	case ',':
		p.pos = SkipSpace(p.b, p.pos+1)
		return false, nil
	case closing:
		p.pos++
		return true, nil
	}
	return false, p.errorf("expected ',' or '%c' in %s", closing, what)
}

func (p *parser) object(depth int) (*Value, error) {
	v := &Value{Kind: KindObject}
	index := map[string]int{}
	p.pos = SkipSpace(p.b, p.pos+1) // after '{'
	if p.pos < len(p.b) && p.b[p.pos] == '}' {
		p.pos++
		return v, nil
	}
	for {
		if p.pos >= len(p.b) || p.b[p.pos] != '"' {
			return nil, p.errorf("expected a string key")
		}
		key, next, err := parseString(p.b, p.pos)
		if err != nil {
			return nil, err
		}
		p.pos = SkipSpace(p.b, next)
		if p.pos >= len(p.b) || p.b[p.pos] != ':' {
			return nil, p.errorf("expected ':' after an object key")
		}
		p.pos = SkipSpace(p.b, p.pos+1)
		item, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		if at, dup := index[key]; dup {
			v.Items[at] = item // JS: last value wins, first position kept
		} else {
			index[key] = len(v.Keys)
			v.Keys = append(v.Keys, key)
			v.Items = append(v.Items, item)
		}
		if end, err := p.next('}', "an object"); end || err != nil {
			return v, err
		}
	}
}

func (p *parser) array(depth int) (*Value, error) {
	v := &Value{Kind: KindArray}
	p.pos = SkipSpace(p.b, p.pos+1) // after '['
	if p.pos < len(p.b) && p.b[p.pos] == ']' {
		p.pos++
		return v, nil
	}
	for {
		item, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		v.Items = append(v.Items, item)
		if end, err := p.next(']', "an array"); end || err != nil {
			return v, err
		}
	}
}

// number scans the JSON number grammar (the validator's number) and
// converts it the way JS does (IEEE round-to-nearest; overflow gives
// ±Infinity).
func (p *parser) number() (*Value, error) {
	start := p.pos
	end, problem := number(p.b, start)
	p.pos = end
	if problem != "" {
		return nil, p.errorf("%s", problem)
	}
	f, err := strconv.ParseFloat(string(p.b[start:end]), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return nil, &syntaxError{Msg: "invalid number", Offset: start}
	}
	return &Value{Kind: KindNumber, Num: f}, nil
}
