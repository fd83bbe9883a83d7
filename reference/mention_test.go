package reference

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// Common URIs of the conformance catalogue.
var (
	uSrc   = EncodeURI("src")   // dsh-session:InNyYyI
	uOuter = EncodeURI("outer") // dsh-session:Im91dGVyIg
	uOther = EncodeURI("other")
	uUID   = EncodeURI(uid)
)

func TestGoldenParse(t *testing.T) {
	for _, c := range loadGolden(t, "parse") {
		t.Run(c.name, func(t *testing.T) {
			text := str(t, c.input, "text")
			res, err := ParseText(text)
			mentions, problems := ScanText(text)
			if code, msg, isErr := goldenError(t, c.output); isErr {
				checkError(t, err, code, msg)
				if len(problems) == 0 || problems[0].Err.Error() != msg {
					t.Errorf("ScanText problems = %+v, want the first to be %q", problems, msg)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseText: %v", err)
			}
			if want := str(t, c.output, "text"); res.Text != want {
				t.Errorf("text = %q, want %q", res.Text, want)
			}
			var want []ParsedReference
			for _, r := range c.output.Field("references").Items {
				want = append(want, ParsedReference{SessionID: str(t, r, "sessionId"), Label: str(t, r, "label")})
			}
			if len(want) == 0 {
				want = []ParsedReference{}
			}
			if !reflect.DeepEqual(res.References, want) {
				t.Errorf("references = %q, want %q", res.References, want)
			}
			if len(problems) != 0 || !sameMentions(mentions, res.Mentions) {
				t.Errorf("ScanText = %+v, %+v; ParseText mentions %+v", mentions, problems, res.Mentions)
			}
		})
	}
}

func sameMentions(a, b []Mention) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

// TestParseConformance covers the accepted examples of conformance §3.
func TestParseConformance(t *testing.T) {
	ref := func(id, label string) ParsedReference { return ParsedReference{id, label} }
	const bt = "`"
	tests := []struct {
		name, in, text string
		refs           []ParsedReference
	}{
		{"spec markdown and bare", "compare @[源\\]会话](" + uUID + ") and " + uUID,
			"compare @源]会话 and @" + uid, []ParsedReference{ref(uid, "源]会话"), ref(uid, uid)}},
		{"spec punctuation", "see " + uUID + ". and " + bt + uUID + bt,
			"see @" + uid + ". and " + bt + "@" + uid + bt, []ParsedReference{ref(uid, uid), ref(uid, uid)}},
		{"spec empty payload", "what is a dsh-session: URI?", "what is a dsh-session: URI?", nil},
		{"spec percent", "see dsh-session:%%%", "see dsh-session:%%%", nil},
		{"research", "use @[Research](dsh-session:InNyYyI) now", "use @Research now", []ParsedReference{ref("src", "Research")}},
		{"escapes", `@[a\]b\\c\x](` + uSrc + `)`, `@a]b\cx`, []ParsedReference{ref("src", `a]b\cx`)}},
		{"open bracket", "@[a[b](" + uSrc + ")", "@a[b", []ParsedReference{ref("src", "a[b")}},
		{"close paren", "@[a)b](" + uSrc + ")", "@a)b", []ParsedReference{ref("src", "a)b")}},
		{"empty label", "@[](" + uSrc + ")!", "@!", []ParsedReference{ref("src", "")}},
		{"newline label", "@[line1\nline2](" + uSrc + ")", "@line1\nline2", []ParsedReference{ref("src", "line1\nline2")}},
		{"U+2028 label", "@[a\u2028b](" + uSrc + ")", "@a\u2028b", []ParsedReference{ref("src", "a\u2028b")}},
		{"escaped emoji", "@[\\🙂](" + uSrc + ")", "@🙂", []ParsedReference{ref("src", "🙂")}},
		{"dollar patterns", "@[$&$1$$](" + uSrc + ")", "@$&$1$$", []ParsedReference{ref("src", "$&$1$$")}},
		{"space after uri", "@[x](" + uSrc + " extra)", "@[x](@src extra)", []ParsedReference{ref("src", "src")}},
		{"tab after uri", "@[x](" + uSrc + "\t)", "@[x](@src\t)", []ParsedReference{ref("src", "src")}},
		{"nbsp after uri", "@[x](" + uSrc + "\u00a0)", "@[x](@src\u00a0)", []ParsedReference{ref("src", "src")}},
		{"ideographic space after uri", "@[x](" + uSrc + "\u3000)", "@[x](@src\u3000)", []ParsedReference{ref("src", "src")}},
		{"BOM after uri", "@[x](" + uSrc + "\ufeff)", "@[x](@src\ufeff)", []ParsedReference{ref("src", "src")}},
		{"U+2028 after uri", "@[x](" + uSrc + "\u2028)", "@[x](@src\u2028)", []ParsedReference{ref("src", "src")}},
		{"dangling backslash", `@[a\](` + uSrc + `)`, `@[a\](@src)`, []ParsedReference{ref("src", "src")}},
		{"backslash newline", "@[a\\\nb](" + uSrc + ")", "@[a\\\nb](@src)", []ParsedReference{ref("src", "src")}},
		{"backslash CR", "@[a\\\rb](" + uSrc + ")", "@[a\\\rb](@src)", []ParsedReference{ref("src", "src")}},
		{"backslash U+2029", "@[a\\\u2029b](" + uSrc + ")", "@[a\\\u2029b](@src)", []ParsedReference{ref("src", "src")}},
		{"no at", "[x](" + uSrc + ")", "[x](@src)", []ParsedReference{ref("src", "src")}},
		{"double at", "@@[x](" + uSrc + ")", "@@x", []ParsedReference{ref("src", "x")}},
		{"nested", "@[@[in](" + uSrc + ")](" + uOuter + ")", "@@[in](@outer)",
			[]ParsedReference{ref("src", "@[in"), ref("outer", "outer")}},
		{"uri in label", "@[dsh-session:InNyYyI](" + uOther + ")", "@dsh-session:InNyYyI",
			[]ParsedReference{ref("other", "dsh-session:InNyYyI")}},
		{"markdown then bare", "@[L](" + uSrc + ")" + uSrc, "@L@src", []ParsedReference{ref("src", "L"), ref("src", "src")}},
		{"same id three times", "@[one](" + uSrc + ") @[two](" + uSrc + ") " + uSrc, "@one @two @src",
			[]ParsedReference{ref("src", "one"), ref("src", "two"), ref("src", "src")}},
		{"order", EncodeURI("c") + " @[B](" + EncodeURI("b") + ") " + EncodeURI("a"), "@c @B @a",
			[]ParsedReference{ref("c", "c"), ref("b", "B"), ref("a", "a")}},
		{"bare then equals", uSrc + "=", "@src=", []ParsedReference{ref("src", "src")}},
		{"bare then slash", uSrc + "/more", "@src/more", []ParsedReference{ref("src", "src")}},
		{"bare then plus", uSrc + "+x", "@src+x", []ParsedReference{ref("src", "src")}},
		{"bare mid word", "prefix" + uSrc, "prefix@src", []ParsedReference{ref("src", "src")}},
		{"bare in parens", "(" + uSrc + ")", "(@src)", []ParsedReference{ref("src", "src")}},
		{"bare CRLF", "a\r\n" + uSrc + "\r\nb", "a\r\n@src\r\nb", []ParsedReference{ref("src", "src")}},
		{"uppercase scheme", "DSH-SESSION:InNyYyI", "DSH-SESSION:InNyYyI", nil},
		{"other scheme", "@[x](https://a)", "@[x](https://a)", nil},
		{"emoji id", EncodeURI("🙂"), "@🙂", []ParsedReference{ref("🙂", "🙂")}},
		{"newline id", EncodeURI("a\nb"), "@a\nb", []ParsedReference{ref("a\nb", "a\nb")}},
		{"empty id bare", EncodeURI(""), "@", []ParsedReference{ref("", "")}},
		{"empty id markdown", "@[](" + EncodeURI("") + ")", "@", []ParsedReference{ref("", "")}},
		{"lone surrogate id", "@[x](dsh-session:Ilx1ZDgwMHgi)", "@x", []ParsedReference{ref("\xed\xa0\x80x", "x")}},
		{"lone surrogate id bare", "dsh-session:Ilx1ZDgwMHgi", "@\xed\xa0\x80x", []ParsedReference{ref("\xed\xa0\x80x", "\xed\xa0\x80x")}},
		{"empty", "", "", nil},
		{"label across lines with bracket", "@[a\n[b\\]\n](" + uSrc + ")", "@a\n[b]\n", []ParsedReference{ref("src", "a\n[b]\n")}},
		{"at bracket never closed", "@[abc " + uSrc, "@[abc @src", []ParsedReference{ref("src", "src")}},
		{"at bracket at end", "x @[", "x @[", nil},
		{"bracket paren without uri", "@[a](b) " + uSrc, "@[a](b) @src", []ParsedReference{ref("src", "src")}},
		{"markdown uri unclosed", "@[a](" + uSrc, "@[a](@src", []ParsedReference{ref("src", "src")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := ParseText(tt.in)
			if err != nil {
				t.Fatalf("ParseText(%q): %v", tt.in, err)
			}
			if res.Text != tt.text {
				t.Errorf("text = %q, want %q", res.Text, tt.text)
			}
			want := tt.refs
			if want == nil {
				want = []ParsedReference{}
			}
			if !reflect.DeepEqual(res.References, want) {
				t.Errorf("references = %q, want %q", res.References, want)
			}
			checkScanAgrees(t, tt.in)
		})
	}
}

// TestParseRejects covers the rejected inputs of conformance §3: the
// message quotes the URI as captured.
func TestParseRejects(t *testing.T) {
	tests := []struct {
		in, uri string
		kind    MentionKind
	}{
		{"see dsh-session:IiJ", "dsh-session:IiJ", MentionBare},
		{"@[bad](dsh-session:%%%)", "dsh-session:%%%", MentionMarkdown},
		{"@[bad](dsh-session:not-canonical)", "dsh-session:not-canonical", MentionMarkdown},
		{"@[x](dsh-session:InNyYyI.)", "dsh-session:InNyYyI.", MentionMarkdown},
		{"@[x](dsh-session:)", "dsh-session:", MentionMarkdown},
		{"@[x](dsh-session:InNyYyIabc)", "dsh-session:InNyYyIabc", MentionMarkdown},
		{"@[x](dsh-session:a b)", "dsh-session:a", MentionBare},
		{"xdsh-session:InNyYyIabc", "dsh-session:InNyYyIabc", MentionBare},
		{"dsh-session:-", "dsh-session:-", MentionBare},
		{"dsh-session:_", "dsh-session:_", MentionBare},
		{"see " + EncodeURI(`{"id":"x"}`)[:0] + "dsh-session:eyJpZCI6IngifQ", "dsh-session:eyJpZCI6IngifQ", MentionBare},
		{"@[x](dsh-session:\"<q>)", "dsh-session:\"<q>", MentionMarkdown},
		// All or nothing: a good mention before the bad one is not returned.
		{"@[ok](" + uSrc + ") then dsh-session:IiJ", "dsh-session:IiJ", MentionBare},
	}
	for _, tt := range tests {
		res, err := ParseText(tt.in)
		want := "invalid session reference URI " + jsjson.Quote(tt.uri)
		if err == nil || err.Error() != want || CodeOf(err) != CodeInvalidReference {
			t.Errorf("ParseText(%q) = %+v, %v; want %s", tt.in, res, err, want)
			continue
		}
		if res.Text != "" || res.References != nil {
			t.Errorf("ParseText(%q) returned a partial result %+v", tt.in, res)
		}
		_, problems := ScanText(tt.in)
		if len(problems) != 1 || problems[0].URI != tt.uri || problems[0].Kind != tt.kind || problems[0].Err.Error() != want {
			t.Errorf("ScanText(%q) problems = %+v, want one %v problem for %q", tt.in, problems, tt.kind, tt.uri)
		}
		checkScanAgrees(t, tt.in)
	}
}

// checkScanAgrees asserts ScanText and ParseText agree on text and that
// every span is in bounds and consistent with the text.
func checkScanAgrees(t *testing.T, text string) {
	t.Helper()
	res, err := ParseText(text)
	mentions, problems := ScanText(text)
	if (err != nil) != (len(problems) > 0) {
		t.Fatalf("ParseText err = %v but ScanText found %d problems", err, len(problems))
	}
	if err != nil {
		if err.Error() != problems[0].Err.Error() {
			t.Errorf("ParseText err %q, first problem %q", err, problems[0].Err)
		}
	} else if !sameMentions(mentions, res.Mentions) {
		t.Errorf("ScanText mentions %+v, ParseText %+v", mentions, res.Mentions)
	}
	// The memoized scanner finds the same matches as the direct one.
	memoMentions, memoProblems := scanTextMemo(text, 0)
	if !sameMentions(memoMentions, mentions) || !reflect.DeepEqual(memoProblems, problems) {
		t.Errorf("memoized scan %+v %+v, direct %+v %+v", memoMentions, memoProblems, mentions, problems)
	}
	prev := 0
	var spans []Span
	for _, m := range mentions {
		spans = append(spans, m.Span)
		checkSpans(t, text, m.Kind, m.Span, m.URISpan, m.URI)
		if m.Kind == MentionMarkdown {
			if m.LabelSpan.Start != m.Span.Start+2 || text[m.LabelSpan.End:m.URISpan.Start] != "](" {
				t.Errorf("label span %v of %q", m.LabelSpan, text[m.Span.Start:m.Span.End])
			} else if got := unescapeLabel(text[m.LabelSpan.Start:m.LabelSpan.End]); got != m.Label {
				t.Errorf("label %q, span text unescapes to %q", m.Label, got)
			}
		} else if m.LabelSpan != (Span{m.URISpan.Start, m.URISpan.Start}) || m.Label != m.SessionID {
			t.Errorf("bare mention %+v: label span or label", m)
		}
		if id, err := DecodeURI(m.URI); err != nil || id != m.SessionID {
			t.Errorf("mention URI %q decodes to %q, %v; want %q", m.URI, id, err, m.SessionID)
		}
	}
	for _, p := range problems {
		spans = append(spans, p.Span)
		checkSpans(t, text, p.Kind, p.Span, p.URISpan, p.URI)
		if _, err := DecodeURI(p.URI); err == nil {
			t.Errorf("problem URI %q decodes", p.URI)
		}
	}
	// Matches never overlap.
	for _, s := range sortSpans(spans) {
		if s.Start < prev {
			t.Errorf("overlapping spans %v", spans)
		}
		prev = s.End
	}
}

func checkSpans(t *testing.T, text string, kind MentionKind, span, uriSpan Span, uri string) {
	t.Helper()
	if span.Start < 0 || span.End > len(text) || span.Start >= span.End ||
		uriSpan.Start < span.Start || uriSpan.End > span.End || text[uriSpan.Start:uriSpan.End] != uri ||
		!strings.HasPrefix(uri, URIPrefix) {
		t.Errorf("bad spans %v %v for URI %q in %q", span, uriSpan, uri, text)
		return
	}
	switch kind {
	case MentionMarkdown:
		if !strings.HasPrefix(text[span.Start:], "@[") || text[span.End-1] != ')' || uriSpan.End != span.End-1 {
			t.Errorf("markdown span %v = %q", span, text[span.Start:span.End])
		}
	case MentionBare:
		if span != uriSpan {
			t.Errorf("bare span %v != URI span %v", span, uriSpan)
		}
	default:
		t.Errorf("kind %v", kind)
	}
}

func sortSpans(s []Span) []Span {
	out := append([]Span(nil), s...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Start < out[j-1].Start; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// TestScanTextMultibyteSpans checks byte spans in text with multibyte
// characters before, inside and after the mentions.
func TestScanTextMultibyteSpans(t *testing.T) {
	text := "引号 @[源\\]会话🙂](" + uSrc + ")é " + uOuter + "\u3000dsh-session:IiJ ∑ @[x](dsh-session:%%%)"
	mentions, problems := ScanText(text)
	mdStart := strings.Index(text, "@[源")
	mdURI := strings.Index(text, uSrc)
	bareStart := strings.Index(text, uOuter)
	badBare := strings.Index(text, "dsh-session:IiJ")
	badMd := strings.Index(text, "@[x]")
	wantMentions := []Mention{
		{Kind: MentionMarkdown, SessionID: "src", Label: "源]会话🙂",
			Span: Span{mdStart, mdURI + len(uSrc) + 1}, URISpan: Span{mdURI, mdURI + len(uSrc)},
			LabelSpan: Span{mdStart + 2, mdURI - 2}, URI: uSrc},
		{Kind: MentionBare, SessionID: "outer", Label: "outer",
			Span: Span{bareStart, bareStart + len(uOuter)}, URISpan: Span{bareStart, bareStart + len(uOuter)},
			LabelSpan: Span{bareStart, bareStart}, URI: uOuter},
	}
	if !reflect.DeepEqual(mentions, wantMentions) {
		t.Errorf("mentions\n got %+v\nwant %+v", mentions, wantMentions)
	}
	if len(problems) != 2 {
		t.Fatalf("problems = %+v", problems)
	}
	if p := problems[0]; p.Kind != MentionBare || p.Span != (Span{badBare, badBare + 15}) || p.URISpan != p.Span || p.URI != "dsh-session:IiJ" {
		t.Errorf("problem 0 = %+v", p)
	}
	if p := problems[1]; p.Kind != MentionMarkdown || p.Span != (Span{badMd, len(text)}) ||
		p.URISpan != (Span{badMd + 5, len(text) - 1}) || p.URI != "dsh-session:%%%" || p.Err.Code != CodeInvalidReference {
		t.Errorf("problem 1 = %+v", p)
	}
	checkScanAgrees(t, text)
}

// TestScanTextOrder checks that mentions and problems interleave in
// appearance order and that ParseText reports the first problem.
func TestScanTextOrder(t *testing.T) {
	text := "dsh-session:-- " + uSrc + " @[a](dsh-session:x) @[b](" + uOuter + ")"
	mentions, problems := ScanText(text)
	if len(mentions) != 2 || len(problems) != 2 {
		t.Fatalf("ScanText = %+v, %+v", mentions, problems)
	}
	if problems[0].URI != "dsh-session:--" || problems[1].URI != "dsh-session:x" ||
		mentions[0].Label != "src" || mentions[1].Label != "b" {
		t.Errorf("ScanText = %+v, %+v", mentions, problems)
	}
	if _, err := ParseText(text); err == nil || err.Error() != `invalid session reference URI "dsh-session:--"` {
		t.Errorf("ParseText err = %v", err)
	}
}

// TestParseTextManyOpenBrackets guards the memoized scanner: many "@["
// that never close, and many markdown attempts sharing one long URI run,
// must still give the regex's answer.
func TestParseTextManyOpenBrackets(t *testing.T) {
	text := strings.Repeat("@[a](dsh-session:", 2000) + "x " + uSrc + strings.Repeat("@[", 2000)
	res, err := ParseText(text)
	if err == nil {
		t.Fatalf("ParseText = %+v, want the bare dsh-session:x... error", res.References)
	}
	_, problems := ScanText(text)
	// The first markdown attempt fails (no ")"), so every inner
	// "dsh-session:@..." has an empty bare payload; the only bare match
	// before the space is "dsh-session:x".
	if len(problems) != 1 || problems[0].URI != "dsh-session:x" {
		t.Errorf("problems = %+v", problems[:min(len(problems), 3)])
	}
	ok := strings.Repeat("@[", 3000) + "](" + uSrc + ")"
	res, err = ParseText(ok)
	if err != nil || res.Text != "@"+strings.Repeat("@[", 2999) {
		t.Errorf("ParseText(nested opens) = %q, %v", res.Text[:min(len(res.Text), 20)], err)
	}
	checkScanAgrees(t, ok)
}

func TestFormatMention(t *testing.T) {
	label := func(s string) *string { return &s }
	tests := []struct {
		id    string
		label *string
		want  string
	}{
		{"s", nil, "@[s](dsh-session:InMi)"},
		{"s", label("Research"), "@[Research](dsh-session:InMi)"},
		{"source]", nil, `@[source\]](dsh-session:InNvdXJjZV0i)`},
		{uid, nil, "@[unicode/引号\"/slash\\\\/line\n](" + uUID + ")"},
		{"s", label("源]会话"), `@[源\]会话](dsh-session:InMi)`},
		{"s", label(`a\b]c[d)e(f`), `@[a\\b\]c[d)e(f](dsh-session:InMi)`},
		{"s", label(""), "@[](dsh-session:InMi)"},
		{"s", label(`\`), `@[\\](dsh-session:InMi)`},
		{"s", label("]]"), `@[\]\]](dsh-session:InMi)`},
		{"s", label("line1\nline2"), "@[line1\nline2](dsh-session:InMi)"},
		{"s]\\", label("T]it\\le [x]"), `@[T\]it\\le [x\]](dsh-session:InNdXFwi)`},
	}
	for _, tt := range tests {
		got := FormatMention(tt.id, tt.label)
		if got != tt.want {
			t.Errorf("FormatMention(%q, %v) = %q, want %q", tt.id, tt.label, got, tt.want)
		}
		// A formatted mention parses back to its id and label.
		wantLabel := tt.id
		if tt.label != nil {
			wantLabel = *tt.label
		}
		res, err := ParseText(got)
		if err != nil || len(res.References) != 1 || res.References[0] != (ParsedReference{tt.id, wantLabel}) {
			t.Errorf("ParseText(%q) = %+v, %v", got, res.References, err)
		}
	}
}

func TestEscapeUnescapeLabel(t *testing.T) {
	tests := []struct{ label, escaped string }{
		{"", ""}, {"plain", "plain"}, {`\`, `\\`}, {"]", `\]`}, {`a\]b`, `a\\\]b`},
		{"[x](y)\n", "[x\\](y)\n"}, {"é🙂", "é🙂"},
	}
	for _, tt := range tests {
		if got := string(appendEscapedLabel(nil, tt.label)); got != tt.escaped {
			t.Errorf("appendEscapedLabel(%q) = %q, want %q", tt.label, got, tt.escaped)
		}
		if got := unescapeLabel(tt.escaped); got != tt.label {
			t.Errorf("unescapeLabel(%q) = %q, want %q", tt.escaped, got, tt.label)
		}
	}
	for raw, want := range map[string]string{`\x\🙂`: "x🙂", `a\`: `a\`, "a\\\nb": "a\\\nb", `\\\`: `\\`} {
		if got := unescapeLabel(raw); got != want {
			t.Errorf("unescapeLabel(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestParseResultJSON(t *testing.T) {
	res, err := ParseText("hi")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	if string(b) != `{"text":"hi","references":[]}` {
		t.Errorf("json = %s", b)
	}
}

func BenchmarkParseText(b *testing.B) {
	prompt := strings.Repeat("Some prose about the change, with a path a/b/c.go and an email a@b.dev. ", 50) +
		"See @[Research notes](" + uSrc + ") and " + uOuter + " and @[x\\]y](" + uUID + ").\n"
	b.SetBytes(int64(len(prompt)))
	for b.Loop() {
		if _, err := ParseText(prompt); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkScanTextOpenBrackets(b *testing.B) {
	text := strings.Repeat("@[a](dsh-session:", 5000)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		ScanText(text)
	}
}
