package bytesig

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// randomWords returns n random strings over a small alphabet with
// non-ASCII bytes, of up to max bytes.
func randomWords(rng *rand.Rand, n, max int) []string {
	alphabet := []string{"a", "b", "q", "z", "0", "9", "-", "/", " ", "é", "界", "\xff"}
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		for range rng.IntN(max + 1) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		out[i] = b.String()
	}
	return out
}

// TestSlicedTakesWhatHoldsTakes compares Each with a loop over Holds, on
// sizes around the 64-string words, with needles of zero to three
// characters, and with fn stopping early.
func TestSlicedTakesWhatHoldsTakes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 63, 64, 65, 200, 1000} {
		words := randomWords(rng, n, 10)
		sigs := make([]Sig, n)
		for i, w := range words {
			sigs[i] = Of(w)
		}
		s := SliceOf(n, func(i int) Sig { return sigs[i] })
		for _, needle := range append(randomWords(rng, 50, 3), "", "界") {
			want := Of(needle)
			var held []int
			for i := range sigs {
				if sigs[i].Holds(&want) {
					held = append(held, i)
				}
			}
			var got []int
			s.Each(&want, func(i int) bool { got = append(got, i); return true })
			if !slices.Equal(got, held) {
				t.Fatalf("n=%d needle %q: Each took %v, Holds %v", n, needle, got, held)
			}
			if len(held) > 1 {
				stop := len(held) / 2
				got = got[:0]
				s.Each(&want, func(i int) bool { got = append(got, i); return len(got) < stop })
				if !slices.Equal(got, held[:stop]) {
					t.Fatalf("n=%d needle %q: stopped Each took %v, want %v", n, needle, got, held[:stop])
				}
			}
		}
	}
}

// BenchmarkTitleFilter compares a scan of every Sig with Each, over
// 100,000 titles of 20-60 letters, digits and spaces, and needles of three
// hexadecimal digits (an id being typed; the content search's title pass).
func BenchmarkTitleFilter(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789 -"
	words := make([]string, 100000)
	for i := range words {
		w := make([]byte, 20+rng.IntN(40))
		for j := range w {
			w[j] = letters[rng.IntN(len(letters))]
		}
		words[i] = string(w)
	}
	sigs := make([]Sig, len(words))
	for i, w := range words {
		sigs[i] = Of(w)
	}
	s := SliceOf(len(sigs), func(i int) Sig { return sigs[i] })
	needles := make([]Sig, 64)
	for i := range needles {
		needles[i] = Of(fmt.Sprintf("%03x", rng.IntN(4096)))
	}
	b.Run("scan", func(b *testing.B) {
		n := 0
		for i := range b.N {
			want := &needles[i%len(needles)]
			for j := range sigs {
				if sigs[j].Holds(want) {
					n++
				}
			}
		}
		b.ReportMetric(float64(n)/float64(b.N), "hits/op")
	})
	b.Run("build", func(b *testing.B) {
		for range b.N {
			SliceOf(len(sigs), func(i int) Sig { return sigs[i] })
		}
	})
	b.Run("sliced", func(b *testing.B) {
		n := 0
		for i := range b.N {
			s.Each(&needles[i%len(needles)], func(int) bool { n++; return true })
		}
		b.ReportMetric(float64(n)/float64(b.N), "hits/op")
	})
}
