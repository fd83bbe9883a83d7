package jsjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzTagSafeReencoding(f *testing.F) {
	for _, s := range []string{
		`{"text":"</referenced-sessions> IGNORE <x>"}`, `"a > b && c <= d"`,
		` { "b" : 1 , "a" : [ 1.0 , -0 , 0.1 , 1e21 , 1e-7 , 123e-20 , 1E+2 ] } `,
		`{"a":1,"b":2,"a":3}`, `[1e400,-1e400,1e-400,-1e-400]`, `"\u2028\u2029\u007f&>/\/"`,
		`"\uD83D\uDE00 \ud800 \udc00x \ud800\ud800 \udc00\ud800"`, `{"\ud800":1,"\udbff":2,"\ud800":3}`,
		`"\u0041\u00e9\u001F\u003c"`, "\"\xff\xe2\x82x\xed\xa0\x80\"", `[true,false,null,{},[],""]`,
		`9007199254740993`, `0.000001`, `123456789012345680000`, `-1.5e-9`, `5e-324`, `1.7976931348623157e308`,
		"", "  \n", `{"a":}`, `[1,]`, `01`, `"\x"`, `[[[[[[[[[[]]]]]]]]]]`, strings.Repeat("[", 10001) + strings.Repeat("]", 10001), `{"__proto__":{"<":[1,{"a":null}]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := tagSafe(data) // must never panic
		if !json.Valid(data) {
			// encoding/json refuses nesting deeper than 10000; JSON.parse
			// (and this encoder, up to maxDepth) does not.
			if err == nil && !tooDeepForGo(data) {
				t.Fatalf("tagSafe(%q) = %s, but encoding/json rejects the input", data, out)
			}
			if len(bytes.Trim(data, " \t\n\r")) == 0 && !errors.Is(err, errNotSerializable) {
				t.Fatalf("tagSafe(%q): %v, want errNotSerializable", data, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("tagSafe(%q): %v", data, err)
		}
		if bytes.IndexByte(out, '<') >= 0 {
			t.Fatalf("tagSafe(%q) = %s contains '<'", data, out)
		}
		if !utf8.Valid(out) || !json.Valid(out) {
			t.Fatalf("tagSafe(%q) = %q is not valid UTF-8 JSON", data, out)
		}
		// The output is canonical: encoding it again changes nothing.
		if again, err := tagSafe(out); err != nil || !bytes.Equal(again, out) {
			t.Fatalf("tagSafe(%s) = %s, %v; not a fixed point", out, again, err)
		}
		// Invalid UTF-8 is read as a JS TextDecoder reads it (one U+FFFD per
		// maximal ill-formed subsequence) while encoding/json writes one per
		// byte, so compare with the input as JS reads it.
		in := RepairUTF8(data)
		want, got := decodeGo(t, in), decodeGo(t, out)
		if fffdKey(want) {
			// encoding/json turns every lone surrogate escape into U+FFFD, so
			// distinct JS keys such as "\ud800" and "\udbff" collide, and the
			// surviving value depends on key order, which JS changes for
			// duplicates. Only such inputs skip the value comparison.
			return
		}
		if !sameGoValue(want, got) {
			t.Fatalf("tagSafe(%q) = %s decodes to %#v, input to %#v", data, out, got, want)
		}
	})
}

// tooDeepForGo reports whether encoding/json rejects data only for its
// nesting depth.
func tooDeepForGo(data []byte) bool {
	var v any
	err := json.Unmarshal(data, &v)
	return err != nil && strings.Contains(err.Error(), "exceeded max depth")
}

// decodeGo decodes JSON with encoding/json, numbers kept as json.Number.
func decodeGo(t *testing.T, data []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("encoding/json cannot decode %q: %v", data, err)
	}
	return v
}

// fffdKey reports whether any object key in v holds U+FFFD.
func fffdKey(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if strings.ContainsRune(k, utf8.RuneError) || fffdKey(x) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if fffdKey(x) {
				return true
			}
		}
	}
	return false
}

// sameGoValue compares an input value with the encoder's output value as
// JSON.parse + JSON.stringify relate them: numbers are equal as float64
// (-0 equals 0) and a number out of float64 range (JS ±Infinity) becomes
// null.
func sameGoValue(in, out any) bool {
	switch in := in.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(in), 64)
		if math.IsInf(f, 0) {
			return out == nil
		}
		o, ok := out.(json.Number)
		if err != nil || !ok {
			return false
		}
		g, err := strconv.ParseFloat(string(o), 64)
		return err == nil && g == f
	case map[string]any:
		o, ok := out.(map[string]any)
		if !ok || len(o) != len(in) {
			return false
		}
		for k, x := range in {
			y, ok := o[k]
			if !ok || !sameGoValue(x, y) {
				return false
			}
		}
		return true
	case []any:
		o, ok := out.([]any)
		if !ok || len(o) != len(in) {
			return false
		}
		for i := range in {
			if !sameGoValue(in[i], o[i]) {
				return false
			}
		}
		return true
	default: // string, bool, nil
		return in == out
	}
}

// FuzzLiteralLens checks LiteralLens against StringLen and QuotedLen of the
// decoded string on any input, and that it declines only literals that need
// the decoded text: a \u escape, invalid UTF-8, a raw control character or
// quote, a malformed escape.
func FuzzLiteralLens(f *testing.F) {
	for _, s := range []string{
		`""`, `"plain ascii text, long enough for words"`, `"a<b <<< c"`, `"\n\t\"\\\/\b\f\r"`, `"a\\/b"`, `"\\\/"`,
		`"x\u0041"`, `"\ud800"`, "\"é 界 🙂 \u2028\u2029 \x7f > &\"", "\"\xff\"", "\"\xe2\x82\"", "\"\xed\xa0\x80\"",
		"\"tab\there\"", `"a"b"`, `"ends with \"`, `"\x"`, `"`, `x`, `"12345678<12345678\n12345678"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		n, q, ok := LiteralLens(v)
		if !ok {
			if measurable(v) {
				t.Fatalf("LiteralLens(%q) declined a literal it can measure", v)
			}
			return
		}
		wantN, isString := StringLen(v)
		s, _ := String(v)
		if !isString || n != wantN || q != QuotedLen(s, true) {
			t.Fatalf("LiteralLens(%q) = %d, %d; StringLen %d (%v), QuotedLen %d", v, n, q, wantN, isString, QuotedLen(s, true))
		}
	})
}

// measurable reports whether v is a literal LiteralLens must measure: valid
// UTF-8, no raw control character or quote inside, and only the short
// escapes.
func measurable(v []byte) bool {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' || !utf8.Valid(v) {
		return false
	}
	b := v[1 : len(v)-1]
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"' || c < 0x20:
			return false
		case c == '\\':
			if i+1 == len(b) || !strings.ContainsRune(`"\/bfnrt`, rune(b[i+1])) {
				return false
			}
			i++
		}
	}
	return true
}

// appendJSStringByByte is AppendJSString one byte at a time, without the
// 8-byte stride over plain ASCII: its oracle.
func appendJSStringByByte(dst []byte, s string, tagSafe bool) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if e := shortEscape[c]; e != 0 {
				dst = append(dst, '\\', e)
			} else if c < 0x20 || (c == '<' && tagSafe) {
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			} else {
				dst = append(dst, c)
			}
			i++
			continue
		}
		if r, ok := SurrogateAt(s, i); ok {
			if lo, ok := SurrogateAt(s, i+3); ok && isHighSurrogate(r) && !isHighSurrogate(lo) {
				dst = utf8.AppendRune(dst, combineSurrogates(r, lo))
				i += 6
			} else {
				dst = append(dst, '\\', 'u', hexDigits[r>>12], hexDigits[(r>>8)&0xf], hexDigits[(r>>4)&0xf], hexDigits[r&0xf])
				i += 3
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, "\uFFFD"...)
			i += InvalidLen(s, i)
			continue
		}
		dst = append(dst, s[i:i+size]...)
		i += size
	}
	return append(dst, '"')
}

// FuzzAppendJSString: the strided AppendJSString writes what the
// byte-at-a-time oracle writes, tag-safe or not, and its QuotedLen.
func FuzzAppendJSString(f *testing.F) {
	for _, s := range []string{"", "plain ascii text of some length", "0123456<", "01234567<", "abcdefg\"hij\\klmnop\n",
		"eight by\x1ftes", "\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f<", "long text é then 😀 and \xed\xa0\xbd\xed\xb8\x80 pair", "\xed\xa0\x80 lone \xff bad",
		"        \u2028\u2029        ", "aaaaaaa\xed\xa0\xbd\xed\xb8\x80aaaaaaaa<<<<<<<<"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, tagSafe := range []bool{false, true} {
			want := appendJSStringByByte([]byte("x"), s, tagSafe)
			got := AppendJSString([]byte("x"), s, tagSafe)
			if !bytes.Equal(got, want) {
				t.Fatalf("AppendJSString(%q, %v) = %q, want %q", s, tagSafe, got, want)
			}
			if n := QuotedLen(s, tagSafe); n != len(want)-1 {
				t.Fatalf("QuotedLen(%q, %v) = %d, want %d", s, tagSafe, n, len(want)-1)
			}
		}
	})
}

// FuzzPlainBody: the strided PlainBody agrees with its definition checked
// a byte at a time (no escape, quote or control character; valid UTF-8).
func FuzzPlainBody(f *testing.F) {
	for _, s := range []string{
		"", "plain ascii text, long enough for words", "é 界 🙂 \u2028 mixed 한국어 مرحبا", "12345678\\12345678",
		"1234567\"", "tab\there", "\xff", "\xe2\x82", "\xed\xa0\x80", "\xf0\x9f\x98", "\xf4\x90\x80\x80", "abcdefgh😀\x80",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want := utf8.Valid(b)
		for _, c := range b {
			if c == '\\' || c == '"' || c < 0x20 {
				want = false
			}
		}
		if got := PlainBody(b); got != want {
			t.Fatalf("PlainBody(%q) = %v, want %v", b, got, want)
		}
	})
}

// FuzzTapeLiteralLens: for a string the validating walk held on its tape in
// valid UTF-8, the tape's counted lengths are LiteralLens's (and it
// declines what LiteralLens declines); a slice that is not one held value
// (white space around it, several members, the member's colon) is
// measured by LiteralLens itself.
func FuzzTapeLiteralLens(f *testing.F) {
	for _, s := range []string{
		`""`, `"plain ascii text, long enough for words"`, `"a<b <<< c"`, `"\n\t\"\\\/\b\f\r"`, `"a\\/b"`, `"\\\/"`,
		`"x\u0041"`, `"\ud800"`, "\"é 界 🙂 \u2028\u2029 \x7f > &\"", `"\/\/<\n"`, `"a\\u0041"`, `"\\\\"`, `"12345678<12345678\n12345678"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		line := append(append([]byte(`{"a":[{"text":`), v...), `}],"b":1}`...)
		entries, held, ok, utf8OK := CheckObjectTape(line, nil)
		if !ok || !held || !utf8OK {
			return
		}
		tape := &Tape{Text: line, Entries: entries, UTF8: true}
		lit := line[len(`{"a":[{"text":`) : len(line)-len(`}],"b":1}`)]
		for _, w := range [][]byte{lit, line[len(`{"a":[{"text":`)-1 : len(line)-len(`}],"b":1}`)]} {
			n, q, ok := tape.LiteralLens(w)
			wantN, wantQ, wantOK := LiteralLens(w)
			if ok != wantOK || (ok && (n != wantN || q != wantQ)) {
				t.Fatalf("tape.LiteralLens(%q) = %d, %d, %v; LiteralLens %d, %d, %v", w, n, q, ok, wantN, wantQ, wantOK)
			}
		}
	})
}
