package jsjson

import (
	"bytes"
	"unsafe"
)

// A Tape is a JSON text CheckObjectTape validated and the entries it
// recorded. Its Members, Elements and ObjectField read a value of the
// text (a slice of Text, as a walk or the tape gives it) from the entries
// when the tape holds that object or array, without walking its bytes
// again, and walk the bytes otherwise, answering exactly as the package
// functions of the same names. A nil *Tape holds nothing.
type Tape struct {
	Text    []byte
	Entries []Member
	// UTF8 is set when Text is valid UTF-8 throughout (CheckObjectTape
	// reported it, or the text was repaired): LiteralLens relies on it.
	UTF8 bool
}

// Members is Members(v, fn), from the tape when it holds the object v.
func (t *Tape) Members(v []byte, fn func(key, value []byte)) error {
	k := t.find(v, '{')
	if k < 0 {
		return Members(v, fn)
	}
	for e := t.Entries[k].Sub; e > 0; e = t.Entries[e].Next {
		fn(t.Entries[e].Key(t.Text), t.Entries[e].Value(t.Text))
	}
	return nil
}

// Elements is Elements(v, fn), from the tape when it holds the array v.
func (t *Tape) Elements(v []byte, fn func(value []byte)) (ok bool, err error) {
	k := t.find(v, '[')
	if k < 0 {
		return Elements(v, fn)
	}
	for e := t.Entries[k].Sub; e > 0; e = t.Entries[e].Next {
		fn(t.Entries[e].Value(t.Text))
	}
	return true, nil
}

// ObjectField is ObjectField(v, name), from the tape when it holds the
// object v.
func (t *Tape) ObjectField(v []byte, name string) []byte {
	k := t.find(v, '{')
	if k < 0 {
		return ObjectField(v, name)
	}
	var found []byte
	for e := t.Entries[k].Sub; e > 0; e = t.Entries[e].Next {
		if KeyIs(t.Entries[e].Key(t.Text), name) {
			found = t.Entries[e].Value(t.Text)
		}
	}
	return found
}

// LiteralLens is LiteralLens(v). When v is a string the tape holds (a
// member value or an element of an object or array on it) in a text of
// valid UTF-8, v is known to be a literal with only valid escapes, no raw
// control character and valid UTF-8, so its lengths come from counting
// bytes in vectorised searches rather than from a pass that stops at
// every escape and multibyte character: '<' (written back as \u003c) and
// the escapes, found from their backslashes (a run of k of them holds
// k/2 escaped backslashes and, when k is odd, escapes the byte after it;
// an escaped solidus is written back as one byte). A literal with a \u
// escape is measured by LiteralLens.
func (t *Tape) LiteralLens(v []byte) (textLen, quotedLen int, ok bool) {
	if t == nil || !t.UTF8 || len(v) < 2 || v[0] != '"' || t.entry(v) < 0 {
		return LiteralLens(v)
	}
	b := v[1 : len(v)-1]
	escapes, solidus := 0, 0
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\\')
		if j < 0 {
			break
		}
		run := i + j
		for i = run; i < len(b) && b[i] == '\\'; i++ {
		}
		k := i - run
		escapes += (k + 1) / 2
		if k%2 == 1 { // the last backslash escapes b[i]
			if i == len(b) || b[i] == 'u' {
				return LiteralLens(v)
			}
			if b[i] == '/' {
				solidus++
			}
			i++
		}
	}
	lt := bytes.Count(b, []byte{'<'})
	return len(b) - escapes, 2 + len(b) + 5*lt - solidus, true
}

// find returns the index of the entry whose value is v, an object or
// array (by its first byte, open) whose entries the tape holds; -1 when
// there is none.
func (t *Tape) find(v []byte, open byte) int32 {
	if len(v) == 0 || v[0] != open {
		return -1
	}
	k := t.entry(v)
	if k < 0 || t.Entries[k].Sub < 0 {
		return -1
	}
	return k
}

// entry returns the index of the entry whose value is v (a slice of
// Text); -1 when there is none. Entries are in document order, so their
// values' starts increase with the index.
func (t *Tape) entry(v []byte) int32 {
	if t == nil || len(v) == 0 || len(t.Entries) == 0 || len(t.Text) == 0 {
		return -1
	}
	off := uintptr(unsafe.Pointer(unsafe.SliceData(v))) - uintptr(unsafe.Pointer(unsafe.SliceData(t.Text)))
	if off >= uintptr(len(t.Text)) || uintptr(len(v)) > uintptr(len(t.Text))-off {
		return -1 // not a slice of Text
	}
	// A binary search written out: slices.BinarySearchFunc's comparison
	// is a call per step, and an item's sizes look up each of its blocks
	// and texts here.
	at := int32(off)
	lo, hi := 0, len(t.Entries)
	for lo < hi {
		if m := int(uint(lo+hi) >> 1); t.Entries[m].At < at {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == len(t.Entries) || t.Entries[lo].At != at || t.Entries[lo].End != at+int32(len(v)) {
		return -1
	}
	return int32(lo)
}
