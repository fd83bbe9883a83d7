package workload

import (
	"math/rand"
	"strings"
	"unicode/utf8"
)

// asciiWords is the vocabulary of ASCII prose and code in generated texts.
var asciiWords = []string{
	"the", "migration", "index", "table", "orders", "customer_id", "function", "returns",
	"error", "value", "config", "session", "branch", "commit", "build", "test", "passes",
	"fails", "because", "should", "we", "can", "use", "`go test ./...`", "`git rebase -i`",
	"retry", "timeout", "buffer", "reader", "writer", "struct", "interface", "pointer",
	"cache", "latency", "p99", "budget", "bytes", "frame", "zstd", "JSON", "line", "parse",
	"decode", "encode", "handler", "request", "response", "server", "client", "editor",
	"completion", "diagnostic", "range", "offset", "column", "UTF-16", "path", "/home/alice/proj",
	"src/main.go:42:", "TODO", "fix", "refactor", "and", "or", "not", "with", "without",
	"<tag>", "a&b", "\"quoted\"", "back\\slash", "x=1;", "if", "else", "for", "return", "nil",
}

// multibyteWords are non-ASCII words (2-, 3- and 4-byte UTF-8) mixed in at
// the configured share.
var multibyteWords = []string{
	"界", "引号", "日本語のテキスト", "中文", "é", "naïve", "Ünïcode", "straße", "🙂", "😀",
	"Привет", "مرحبا", "한국어", "ελληνικά", "—", "…", "“quoted”", "İstanbul",
}

// textGen produces deterministic pseudo-natural text.
type textGen struct {
	rng       *rand.Rand
	multibyte float64
}

// text returns a string of about n bytes (never less than 1 byte), made of
// words, spaces, occasional newlines and code lines.
func (g *textGen) text(n int) string {
	if n < 1 {
		n = 1
	}
	var b strings.Builder
	b.Grow(n + 32)
	sinceNewline := 0
	for b.Len() < n {
		var w string
		if g.multibyte > 0 && g.rng.Float64() < g.multibyte {
			w = multibyteWords[g.rng.Intn(len(multibyteWords))]
		} else {
			w = asciiWords[g.rng.Intn(len(asciiWords))]
		}
		if b.Len() > 0 {
			if sinceNewline > 60 && g.rng.Intn(8) == 0 {
				b.WriteByte('\n')
				sinceNewline = 0
				if g.rng.Intn(6) == 0 {
					b.WriteString("    ")
				}
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(w)
		sinceNewline += len(w) + 1
	}
	return b.String()
}

// title returns a short title of a few words.
func (g *textGen) title() string {
	words := 2 + g.rng.Intn(5)
	parts := make([]string, words)
	for i := range parts {
		if g.multibyte > 0 && g.rng.Float64() < g.multibyte {
			parts[i] = multibyteWords[g.rng.Intn(len(multibyteWords))]
		} else {
			parts[i] = asciiWords[g.rng.Intn(len(asciiWords))]
		}
	}
	return strings.Join(parts, " ")
}

// split cuts s into deltas of 4..48 bytes on rune boundaries, the way a
// model stream arrives.
func (g *textGen) split(s string) []string {
	var out []string
	for len(s) > 0 {
		n := 4 + g.rng.Intn(45)
		if n >= len(s) {
			out = append(out, s)
			break
		}
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n++
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// uuid returns a random (seeded) RFC 4122 version 4 UUID string.
func uuid(rng *rand.Rand) string {
	var b [16]byte
	for i := range b {
		b[i] = byte(rng.Intn(256))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	const hex = "0123456789abcdef"
	out := make([]byte, 0, 36)
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hex[c>>4], hex[c&0xf])
	}
	return string(out)
}
