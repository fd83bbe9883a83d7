package completion

import (
	"fmt"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/lsp/position"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// BenchmarkItems measures one answer's 50 completion items (the default
// candidate limit) as item values, and as the server writes them
// (AppendList into a reused buffer): the work and the garbage of every
// completion request.
func BenchmarkItems(b *testing.B) {
	cands := make([]reference.Candidate, 50)
	for i := range cands {
		cwd := fmt.Sprintf("/home/user/src/project-%02d", i%20)
		cands[i] = reference.Candidate{
			SessionID: fmt.Sprintf("2026-11-%02dT10-00-00-%08x", 1+i%28, i*7919),
			Label:     fmt.Sprintf("Fix the flaky retry test in the scheduler (%d)", i),
			CWD:       &cwd,
			CreatedAt: 1764000000000 + int64(i)*60000,
		}
	}
	text := "see @fix"
	q, ok := FindQuery(text, len(text))
	if !ok {
		b.Fatal("no query")
	}
	m := position.NewMapper(text, position.UTF16)
	b.Run("values", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ItemsStyled(cands, q, m, StylePortable)
		}
	})
	b.Run("list", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf = AppendList(buf[:0], cands, q, m, StylePortable, nil)
		}
	})
}
