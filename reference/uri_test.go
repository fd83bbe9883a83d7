package reference

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// uid is the conformance catalogue's UID: unicode/引号"/slash\/line⏎.
const uid = "unicode/引号\"/slash\\/line\n"

func TestGoldenURI(t *testing.T) {
	seen := map[string]int{}
	for _, c := range loadGolden(t, "uri") {
		mode := str(t, c.input, "mode")
		seen[mode]++
		t.Run(c.name, func(t *testing.T) {
			switch mode {
			case "encode":
				if got, want := EncodeURI(str(t, c.input, "sessionId")), str(t, c.output, "uri"); got != want {
					t.Errorf("EncodeURI = %q, want %q", got, want)
				}
			case "decode":
				id, err := DecodeURI(str(t, c.input, "uri"))
				if code, msg, isErr := goldenError(t, c.output); isErr {
					checkError(t, err, code, msg)
					return
				}
				if err != nil {
					t.Fatalf("DecodeURI: %v", err)
				}
				if want := str(t, c.output, "sessionId"); id != want {
					t.Errorf("DecodeURI = %q, want %q", id, want)
				}
			case "format":
				ref := c.input.Field("reference")
				var label *string
				if l := ref.Field("label"); l != nil {
					label = &l.Str
				}
				if got, want := FormatMention(str(t, ref, "sessionId"), label), str(t, c.output, "mention"); got != want {
					t.Errorf("FormatMention = %q, want %q", got, want)
				}
			default:
				t.Fatalf("unknown mode %q", mode)
			}
		})
	}
	if seen["encode"] == 0 || seen["decode"] == 0 || seen["format"] == 0 {
		t.Errorf("golden uri.json modes seen: %v", seen)
	}
}

// TestURIConformance covers every id of conformance §1's table.
func TestURIConformance(t *testing.T) {
	tests := []struct{ id, uri string }{
		{"target", "dsh-session:InRhcmdldCI"},
		{"source", "dsh-session:InNvdXJjZSI"},
		{"src", "dsh-session:InNyYyI"},
		{"", "dsh-session:IiI"},
		{"a", "dsh-session:ImEi"},
		{"ab", "dsh-session:ImFiIg"},
		{"abc", "dsh-session:ImFiYyI"},
		{"abcd", "dsh-session:ImFiY2Qi"},
		{"source]", "dsh-session:InNvdXJjZV0i"},
		{uid, "dsh-session:InVuaWNvZGUv5byV5Y-3XCIvc2xhc2hcXC9saW5lXG4i"},
		{"🙂", "dsh-session:IvCfmYIi"},
		{"a b\tc", "dsh-session:ImEgYlx0YyI"},
		{"<tag>&", "dsh-session:Ijx0YWc-JiI"},
		{"\u2028\u2029", "dsh-session:IuKAqOKAqSI"},
		{"\x00\x1f\x7f", "dsh-session:Ilx1MDAwMFx1MDAxZn8i"},
		{"é", "dsh-session:IsOpIg"},
		{"e\u0301", "dsh-session:ImXMgSI"},
		{"~-_.+/=", "dsh-session:In4tXy4rLz0i"},
		{"\xed\xa0\x80x", "dsh-session:Ilx1ZDgwMHgi"}, // lone U+D800 in WTF-8
		{"other", "dsh-session:Im90aGVyIg"},
		{"outer", "dsh-session:Im91dGVyIg"},
		{"s", "dsh-session:InMi"},
		{"\n", "dsh-session:IlxuIg"},
	}
	for _, tt := range tests {
		if got := EncodeURI(tt.id); got != tt.uri {
			t.Errorf("EncodeURI(%q) = %q, want %q", tt.id, got, tt.uri)
		}
		if strings.Contains(tt.uri, "=") {
			t.Errorf("%q has padding", tt.uri)
		}
		id, err := DecodeURI(tt.uri)
		if err != nil || id != tt.id {
			t.Errorf("DecodeURI(%q) = %q, %v; want %q", tt.uri, id, err, tt.id)
		}
	}
}

func TestDecodeURIRejects(t *testing.T) {
	rejects := []string{
		"https://example.test", "DSH-SESSION:InNyYyI", "dsh-session", "", "dsh-session:",
		"dsh-session:%%%", "dsh-session:InNyYyI=", "dsh-session:Iv/+Ig", "dsh-session:InNy YyI",
		"dsh-session:InNyYyI\n", "dsh-session:dsh-session:InNyYyI", " dsh-session:InNyYyI",
		"dsh-session:IiJ", "dsh-session:eyJpZCI6IngifQ", "dsh-session:MQ", "dsh-session:bnVsbA",
		"dsh-session:ICJzcmMi", "dsh-session:Ilx1MDA2MSI", "dsh-session:ImFcL2Ii",
		"dsh-session:InNyYyJ", "dsh-session:Iv8i", "dsh-session:-", "dsh-session:_",
		"dsh-session:not-canonical", "dsh-session:InNyYyIabc", "dsh-session:InNyYyI.",
		"dsh-session:a", "dsh-session:InNyYyIa", // dangling 6-bit character
		"dsh-session:InNyYyIg",            // "src" + space: JSON whitespace after the value
		"dsh-session:Ilx1MDAwYSI",         // "\u000a": JS writes "\n"
		"dsh-session:Ilx1ZDgzZFx1ZGU0MiI", // "\ud83d\ude42" (JS writes the emoji raw)
		"dsh-session:Ilx1RDgwMHgi",        // "\uD800x": uppercase hex is not canonical
		"dsh-session:7aCA",                // raw WTF-8 surrogate bytes, not JSON
		"dsh-session:Iu2ggCI",             // "<ED A0 80>": raw surrogate bytes inside the string
		"dsh-session:InNyYyI\u00a0",
	}
	for _, uri := range rejects {
		id, err := DecodeURI(uri)
		if err == nil {
			t.Errorf("DecodeURI(%q) = %q, want an error", uri, id)
			continue
		}
		want := "invalid session reference URI " + jsjson.Quote(uri)
		if err.Error() != want || CodeOf(err) != CodeInvalidReference {
			t.Errorf("DecodeURI(%q) error = %s %q, want %s %q", uri, CodeOf(err), err, CodeInvalidReference, want)
		}
	}
	// The message quotes with JSON.stringify: no '<' escape, control
	// characters escaped.
	_, err := DecodeURI("<x>\t\"")
	if want := `invalid session reference URI "<x>\t\""`; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}

// TestURIFixtureVectors checks the URI and mention vectors of
// testdata/fixtures/expected/retention-and-path-vectors.json.
func TestURIFixtureVectors(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "fixtures", "expected", "retention-and-path-vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	root, err := jsjson.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	vectors := root.Field("idVectors")
	if vectors == nil || len(vectors.Items) == 0 {
		t.Fatal("no idVectors")
	}
	for _, v := range vectors.Items {
		id, uri, mention := str(t, v, "id"), str(t, v, "uri"), str(t, v, "mention")
		if got := EncodeURI(id); got != uri {
			t.Errorf("EncodeURI(%q) = %q, want %q", id, got, uri)
		}
		if got, err := DecodeURI(uri); err != nil || got != id {
			t.Errorf("DecodeURI(%q) = %q, %v; want %q", uri, got, err, id)
		}
		// The fixture's label is "lab]el\" followed by the id.
		label := "lab]el\\" + id
		if got := FormatMention(id, &label); got != mention {
			t.Errorf("FormatMention(%q, %q) = %q, want %q", id, label, got, mention)
		}
		res, err := ParseText(mention)
		if err != nil || len(res.References) != 1 || res.References[0] != (ParsedReference{SessionID: id, Label: label}) || res.Text != "@"+label {
			t.Errorf("ParseText(%q) = %+v, %v", mention, res, err)
		}
	}
}

func BenchmarkDecodeURI(b *testing.B) {
	uri := EncodeURI("0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0001")
	for b.Loop() {
		if _, err := DecodeURI(uri); err != nil {
			b.Fatal(err)
		}
	}
}
