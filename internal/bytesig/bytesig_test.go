package bytesig

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestSubstringsPass checks the filter's promise on random strings over a
// small alphabet with non-ASCII bytes: every substring of s passes s's
// signature, and strings that are not substrings are mostly refused (a
// filter that passes everything would pass the first half).
func TestSubstringsPass(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", "q", "z", "0", "9", "-", "/", " ", "é", "界", "\xff"}
	word := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	refused, absent := 0, 0
	for range 20000 {
		s := word(rng.IntN(12))
		g := Of(s)
		if len(s) > 0 {
			a := rng.IntN(len(s))
			b := a + rng.IntN(len(s)-a+1)
			if n := Of(s[a:b]); !g.Holds(&n) {
				t.Fatalf("%q refuses its substring %q", s, s[a:b])
			}
		}
		needle := word(1 + rng.IntN(2))
		n := Of(needle)
		if !strings.Contains(s, needle) {
			absent++
			if !g.Holds(&n) {
				refused++
			}
		} else if !g.Holds(&n) {
			t.Fatalf("%q refuses %q, which it holds", s, needle)
		}
	}
	if refused*2 < absent {
		t.Errorf("refused %d of %d absent needles", refused, absent)
	}
}
