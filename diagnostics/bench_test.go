package diagnostics

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/lsp/position"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// mentionsText returns n mentions of distinct ids joined by sep.
func mentionsText(n int, sep string) string {
	parts := make([]string, n)
	for i := range parts {
		label := fmt.Sprintf("é🙂%d", i)
		parts[i] = reference.FormatMention(fmt.Sprintf("s%d", i), &label)
	}
	return strings.Join(parts, sep)
}

// BenchmarkDiagnostics10k is what one edit costs (Check + ToLSP in UTF-16)
// for 10,000 mentions of unknown sessions beyond maxReferences (about
// 20,000 diagnostics): on one line and on separate lines. One line took
// 13.4 s (30× separate lines) when every diagnostic walked its line from
// the start; the target is within 2× of separate lines.
func BenchmarkDiagnostics10k(b *testing.B) {
	env := Env{MaxReferences: 3, Known: func(string) bool { return false }}
	for _, layout := range []struct{ name, sep string }{{"one-line", " "}, {"separate-lines", "\n"}} {
		text := mentionsText(10000, layout.sep)
		b.Run(layout.name, func(b *testing.B) {
			for range b.N {
				m := position.NewMapper(text, position.UTF16)
				if n := len(ToLSP(Check(text, env), m)); n < 19990 {
					b.Fatalf("%d diagnostics", n)
				}
			}
		})
	}
}
