package reference

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// canonicalWTF8 reports whether s is what a JS string maps to in this
// package: valid UTF-8 except for WTF-8 surrogates, with no high surrogate
// directly followed by a low one (that pair is one astral character).
func canonicalWTF8(s string) bool {
	prevHigh := false
	for i := 0; i < len(s); {
		if r, ok := jsjson.SurrogateAt(s, i); ok {
			if prevHigh && r >= 0xDC00 { // a low surrogate
				return false
			}
			prevHigh = r < 0xDC00
			i += 3
			continue
		}
		prevHigh = false
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return false
		}
		i += size
	}
	return true
}

func FuzzDecodeURI(f *testing.F) {
	for _, s := range []string{
		"", "src", "dsh-session:InNyYyI", "dsh-session:Ilx1ZDgwMHgi", "dsh-session:InNyYyJ",
		"dsh-session:Iv8i", "dsh-session:ICJzcmMi", uid, "🙂", "\xed\xa0\x80x", "\x00\x1f\x7f",
		"dsh-session:InNyYyI=", "dsh-session:a", "\u2028<>&\"\\", "\xed\xa0\xbd\xed\xb8\x80",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// s as an id: encode, then decode back.
		uri := EncodeURI(s)
		if !strings.HasPrefix(uri, URIPrefix) || strings.ContainsAny(uri[len(URIPrefix):], "=+/") {
			t.Fatalf("EncodeURI(%q) = %q", s, uri)
		}
		id, err := DecodeURI(uri)
		if err != nil {
			t.Fatalf("DecodeURI(EncodeURI(%q)) = %v", s, err)
		}
		if EncodeURI(id) != uri {
			t.Fatalf("EncodeURI(DecodeURI(%q)) = %q", uri, EncodeURI(id))
		}
		if canonicalWTF8(s) && id != s {
			t.Fatalf("round trip of %q gave %q", s, id)
		}
		// s as a URI: decoding never panics, an accepted URI is canonical
		// and a rejected one gets dsh's message.
		id, err = DecodeURI(s)
		if err == nil {
			if EncodeURI(id) != s {
				t.Fatalf("DecodeURI(%q) accepted a non-canonical URI (id %q)", s, id)
			}
			if !canonicalWTF8(id) {
				t.Fatalf("DecodeURI(%q) = %q, not canonical WTF-8", s, id)
			}
		} else if err.Error() != "invalid session reference URI "+jsjson.Quote(s) || CodeOf(err) != CodeInvalidReference {
			t.Fatalf("DecodeURI(%q) error %v", s, err)
		}
	})
}

func FuzzParseText(f *testing.F) {
	for _, s := range []string{
		"", "use @[Research](dsh-session:InNyYyI) now", `@[a\]b\\c\x](dsh-session:InNyYyI)`,
		"@[x](dsh-session:InNyYyI extra)", "@[x](dsh-session:InNyYyI\u00a0)", `@[a\](dsh-session:InNyYyI)`,
		"@[a\\\nb](dsh-session:InNyYyI)", "@[@[in](dsh-session:InNyYyI)](dsh-session:Im91dGVyIg)",
		"xdsh-session:InNyYyIabc", "see dsh-session:IiJ", "@[x](dsh-session:a b)", "dsh-session:-",
		"@[\\🙂](dsh-session:InNyYyI)", "@[x](dsh-session:Ilx1ZDgwMHgi)", "@[](dsh-session:IiI)!",
		"compare @[源\\]会话](" + uUID + ") and " + uUID, "@[" + "@[" + "](dsh-session:",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		checkScanAgrees(t, text)
		res, err := ParseText(text)
		if err != nil {
			return
		}
		// Rebuilding the text from the mention spans gives the result text.
		var b strings.Builder
		last := 0
		for _, m := range res.Mentions {
			b.WriteString(text[last:m.Span.Start])
			b.WriteString("@" + m.Label)
			last = m.Span.End
		}
		b.WriteString(text[last:])
		if b.String() != res.Text {
			t.Fatalf("ParseText(%q).Text = %q, spans give %q", text, res.Text, b.String())
		}
		if len(res.References) != len(res.Mentions) {
			t.Fatalf("%d references, %d mentions", len(res.References), len(res.Mentions))
		}
		// Formatting every reference and parsing again gives them back.
		var again strings.Builder
		for _, r := range res.References {
			label := r.Label
			again.WriteString(FormatMention(r.SessionID, &label) + " ")
		}
		res2, err := ParseText(again.String())
		if err != nil || len(res2.References) != len(res.References) {
			t.Fatalf("reparse of formatted mentions: %v, %d refs", err, len(res2.References))
		}
		for i := range res.References {
			if res2.References[i] != res.References[i] {
				t.Fatalf("reference %d: %q became %q", i, res.References[i], res2.References[i])
			}
		}
	})
}
