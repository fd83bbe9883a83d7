package reference

import (
	"os"
	"slices"
	"testing"

	"golang.org/x/text/collate"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// loadCollationVectors reads testdata/collation/icu78.json, written by
// internal/collategen/vectors.mjs from Node's localeCompare (ICU 78).
func loadCollationVectors(t *testing.T) (sorted []string, pairs, repertoire []*jsjson.Value) {
	t.Helper()
	raw, err := os.ReadFile("testdata/collation/icu78.json")
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsjson.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range v.Field("sorted").Items {
		sorted = append(sorted, s.Str)
	}
	return sorted, v.Field("pairs").Items, v.Field("repertoire").Items
}

// TestLocaleCompareICU78Order sorts the curated ids (the conformance
// tie-break list, 🙂 and U+1C89, and characters of many blocks
// added since Unicode 6.2) and expects ICU 78's order exactly.
func TestLocaleCompareICU78Order(t *testing.T) {
	want, _, _ := loadCollationVectors(t)
	got := slices.Clone(want)
	slices.Reverse(got)
	slices.SortStableFunc(got, LocaleCompare)
	if !slices.Equal(got, want) {
		t.Errorf("LocaleCompare order:\n got %q\nwant %q", got, want)
	}
	for i := 1; i < len(want); i++ {
		if c := LocaleCompare(want[i-1], want[i]); c > 0 {
			t.Errorf("LocaleCompare(%q, %q) = %d, want <= 0", want[i-1], want[i], c)
		}
	}
	// Ids a and 🙂 sort as ["🙂","a"], as in Node.
	if c := LocaleCompare("🙂", "a"); c != -1 {
		t.Errorf(`LocaleCompare("🙂", "a") = %d, want -1`, c)
	}
}

// TestLocaleCompareICU78Pairs compares random short strings with Node's
// answers: "pairs" mix everyday characters with new ones, "repertoire"
// draws from all of Unicode 17 (with combining marks and expansions).
func TestLocaleCompareICU78Pairs(t *testing.T) {
	_, pairs, repertoire := loadCollationVectors(t)
	if len(pairs) < 3000 || len(repertoire) < 3000 {
		t.Fatalf("icu78.json has %d pairs and %d repertoire pairs", len(pairs), len(repertoire))
	}
	bad := 0
	for _, p := range append(pairs, repertoire...) {
		a, b, want := p.Items[0].Str, p.Items[1].Str, int(p.Items[2].Num)
		if got := LocaleCompare(a, b); got != want {
			bad++
			if bad <= 20 {
				t.Errorf("LocaleCompare(%q, %q) = %d, want %d", a, b, got, want)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d pairs differ from ICU 78", bad, len(pairs)+len(repertoire))
	}
}

// BenchmarkLocaleCompare measures one id comparison: ASCII ids (x/text
// alone), ids with a character added since Unicode 6.2 and Han ids (both
// through the placement table).
func BenchmarkLocaleCompare(b *testing.B) {
	for _, bc := range []struct{ name, x, y string }{
		{"ascii", "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0001", "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0002"},
		{"emoji", "session-🙂-1", "session-a-1"},
		{"han", "中文会话记录", "中文对话记录"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			LocaleCompare(bc.x, bc.y) // load the table outside the timing
			b.ReportAllocs()
			for b.Loop() {
				LocaleCompare(bc.x, bc.y)
			}
		})
	}
}

// BenchmarkCollateTableLoad measures decoding collate_icu78.bin, paid once
// per process on the first comparison that needs it.
func BenchmarkCollateTableLoad(b *testing.B) {
	LocaleCompare("🙂", "a")
	saved := collTable.places
	b.ReportAllocs()
	for b.Loop() {
		loadCollTable()
	}
	if collTable.err != nil || len(collTable.places) != len(saved) {
		b.Fatalf("reload: %v, %d places (was %d)", collTable.err, len(collTable.places), len(saved))
	}
}

// TestCollateTableBounds checks firstPlaced, the bound that lets ASCII and
// Latin-1 ids skip the table, against the generated table.
func TestCollateTableBounds(t *testing.T) {
	LocaleCompare("🙂", "a")
	if collTable.err != nil {
		t.Fatal(collTable.err)
	}
	if len(collTable.places) < 100000 {
		t.Fatalf("only %d placed characters", len(collTable.places))
	}
	if first := collTable.places[0].cp; first < firstPlaced {
		t.Errorf("U+%04X is placed, below firstPlaced U+%04X", first, firstPlaced)
	}
}

// LocaleCompare compares a and b as JS a.localeCompare(b) does in Node 22
// (ICU 78 root collation, tertiary strength): -1, 0 or +1. Strings whose
// characters x/text's table covers are compared by x/text; others through
// the generated placements (see the comment at the top of collate.go).
func LocaleCompare(a, b string) int {
	c := collators.Get().(*collate.Collator)
	defer collators.Put(c)
	return localeCompare(c, a, b)
}
