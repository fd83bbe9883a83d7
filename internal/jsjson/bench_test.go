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

// benchRecords are session-log records of the most common shapes: an
// assistant message, a stream chunk, a packed text row.
var benchRecords = [][]byte{
	[]byte(`{"type":"assistant/message","seq":20,"time":1786195324914,"data":{"turn":1,"step":1,"message":{"role":"assistant","content":[{"type":"text","text":"reader /home/alice/proj buffer value <tag> é build parse client\nrefactor"},{"type":"tool-call","id":"call_da4b66dc","name":"bash","arguments":"{\"command\":\"grep -rn TODO src | head -n 200\"}"}],"source":{"kind":"model","provider":"deepseek-official","model":"deepseek-v4-flash"},"id":"c1d77f2f-4b5c-4444-a0a1-e8d7db386b9c"},"usage":{"inputTokens":1200,"outputTokens":60}},"sourceEventSeqs":[9,10,11,12,13,14,15,16,17,18,19],"surfaceOp":"append"}`),
	[]byte(`{"type":"assistant/chunk","seq":9,"time":1786195324857,"data":{"turn":1,"step":1,"chunk":{"type":"block-start","index":0,"blockType":"text"}}}`),
	[]byte(`{"type":"text-chunks","seq0":10,"time0":1786195324860,"data":{"turn":1,"step":1,"index":0,"dt":[2,3],"texts":["reader /home","/alice/proj buffer value <tag> é build parse c","lient\nrefactor"]}}`),
}

func benchRecordBytes() (n int64) {
	for _, r := range benchRecords {
		n += int64(len(r))
	}
	return n
}

func BenchmarkCheckRecords(b *testing.B) {
	b.SetBytes(benchRecordBytes())
	for b.Loop() {
		for _, r := range benchRecords {
			if ok, _ := CheckObject(r, func(key, value []byte) {}); !ok {
				b.Fatalf("not an object: %s", r)
			}
		}
	}
}

// benchMixedScripts is a chunk record whose text mixes scripts as a
// multilingual session does: runs of CJK, Hangul, Arabic and emoji between
// ASCII words, so the checker leaves its 8-byte ASCII stride often.
var benchMixedScripts = []byte(`{"type":"text-chunks","seq0":10,"time0":1787160792871,"data":{"turn":1,"step":1,"index":0,"dt":[5,4,2,3,1,1,3,1,2],"texts":[` +
	strings.Repeat(`"branch with 😀 not 中文 for without becaus","e 한국어 \"quoted\" /home/alice/proj 日本語のテキスト writer","timeout test server value مرحبا nil — Ünïcode 界",`, 12) +
	`"end"]}}`)

func BenchmarkCheckMixedScripts(b *testing.B) {
	b.SetBytes(int64(len(benchMixedScripts)))
	var tape []Member
	for b.Loop() {
		var held, ok bool
		if tape, held, ok, _ = CheckObjectTape(benchMixedScripts, tape); !ok || !held {
			b.Fatalf("not an object held on a tape: %s", benchMixedScripts)
		}
	}
}

func BenchmarkCheckRecordsTape(b *testing.B) {
	b.SetBytes(benchRecordBytes())
	var tape []Member
	for b.Loop() {
		for _, r := range benchRecords {
			var held, ok bool
			if tape, held, ok, _ = CheckObjectTape(r, tape); !ok || !held {
				b.Fatalf("not an object held on a tape: %s", r)
			}
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

// BenchmarkAppendJSString writes a session text (mostly ASCII, some
// escapes and non-ASCII) as a tag-safe JSON string: the bulk of a prepared
// context message and of every completion item.
func BenchmarkAppendJSString(b *testing.B) {
	text := strings.Repeat("Here is the plan:\n1. read the file \"main.go\" <tag>\n2. change the loop — carefully ☃ and run the tests again\n", 40)
	b.SetBytes(int64(len(text)))
	var buf []byte
	for b.Loop() {
		buf = AppendJSString(buf[:0], text, true)
	}
}
