package jsjson

import (
	"strings"
	"testing"
)

// benchLine is a transcript record of the usual shape: a few short fields
// and one long text with escapes and non-ASCII.
var benchLine = []byte(`{"type":"message","seq":1234,"ts":"2026-12-01T10:00:00.000Z","data":{"id":"m-42","role":"assistant","parts":[{"kind":"text","text":"` +
	strings.Repeat(`Here is the plan:\n1. read the file \"main.go\"\n2. change the loop — carefully ☃\n`, 40) +
	`"}],"usage":{"input":1200,"output":345,"cost":0.00123}}}`)

func BenchmarkCheckObject(b *testing.B) {
	b.SetBytes(int64(len(benchLine)))
	for b.Loop() {
		if ok, _ := CheckObject(benchLine, func(key, value []byte) {}); !ok {
			b.Fatal("benchLine is not an object")
		}
	}
}

func BenchmarkCheckObjectTape(b *testing.B) {
	b.SetBytes(int64(len(benchLine)))
	var tape []Member
	for b.Loop() {
		var held, ok bool
		if tape, held, ok, _ = CheckObjectTape(benchLine, tape); !ok || !held {
			b.Fatal("benchLine is not an object held on a tape")
		}
	}
}

// benchLiteral is a string literal as JSON.stringify writes session text:
// non-ASCII raw, quotes, line breaks and tabs as two-character escapes,
// other control characters (terminal colours in tool output) as \u00XX.
var benchLiteral = []byte(`"` + strings.Repeat(`line \"one\"\n\ttab é 😀 \u001b[1mbold\u001b[0m plain text run `, 50) + `"`)

func BenchmarkStringWithEscapes(b *testing.B) {
	lit := benchLiteral
	b.SetBytes(int64(len(lit)))
	for b.Loop() {
		if _, ok := String(lit); !ok {
			b.Fatal("not a string")
		}
	}
}

func BenchmarkStringLen(b *testing.B) {
	lit := benchLiteral
	for b.Loop() {
		if _, ok := StringLen(lit); !ok {
			b.Fatal("not a string")
		}
	}
}

func BenchmarkAppendNumber(b *testing.B) {
	nums := []float64{0, 1, -1, 42, 1234567, 0.5, 0.000001, 1.5e-7, 1e21, 123456789012345680000, 3.141592653589793, -2.5e300}
	buf := make([]byte, 0, 64)
	for b.Loop() {
		for _, f := range nums {
			buf = appendNumber(buf[:0], f)
		}
	}
}
