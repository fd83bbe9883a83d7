package reference

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// summaryOf summarises a surface as a source folding it would.
func summaryOf(s *Surface) *SurfaceSummary {
	sum := &SurfaceSummary{Header: s.Header, CapturedThroughSeq: s.CapturedThroughSeq}
	for _, ev := range s.Events {
		sum.Items = append(sum.Items, SurfaceItemOf(ev.Type, ev.Data))
	}
	return sum
}

// TestRetainSummaryEqualsRetain checks that, whenever it answers,
// RetainSummary gives Retain's statistics and data size exactly, over
// random surfaces (multibyte text, escapes, lone surrogates, checkpoints,
// tool results, foreign sources) and budgets; and that it declines
// exactly when Retain would truncate or fail.
func TestRetainSummaryEqualsRetain(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 6))
	outcomes := map[string]int{}
	for iter := range 800 {
		s := randomSurface(rng, rng.IntN(30), 1+rng.IntN(300))
		// Events that project to nothing, between the others.
		for range rng.IntN(3) {
			at := rng.IntN(len(s.Events) + 1)
			extra := []SurfaceEvent{
				rawEvent(900, "tool/result", `{"content":[{"type":"text","text":"out"}]}`),
				userEvent(901, "plugin", "other", "not projected"),
				assistantEvent(902),
			}[rng.IntN(3)]
			s.Events = append(s.Events[:at], append([]SurfaceEvent{extra}, s.Events[at:]...)...)
		}
		label := randomText(rng, 6)
		budget := int64(50 + rng.IntN(3000))
		stats, size, ok := RetainSummary(summaryOf(s), label, budget)
		got, err := Retain(s, label, budget)
		switch {
		case err != nil:
			if ok {
				t.Fatalf("iteration %d: Retain fails (%v), the summary answers %+v", iter, err, stats)
			}
			outcomes["retain fails"]++
		case !ok:
			items, _ := projectSurface(s)
			r := newRetainer(s, label, items, budget)
			if r.drop(); r.size <= budget { // the truncate phase did not run
				// Nothing truncated: the summary should have answered.
				t.Fatalf("iteration %d: summary declined a drop-only retention %+v", iter, got.Stats)
			}
			outcomes["truncated: declined"]++
		default:
			if stats != got.Stats || size != got.Data.Size() {
				t.Fatalf("iteration %d budget %d: summary %+v size %d, Retain %+v size %d", iter, budget, stats, size, got.Stats, got.Data.Size())
			}
			if stats.OmittedMessages > 0 {
				outcomes["dropped"]++
			} else {
				outcomes["whole"]++
			}
		}
	}
	t.Logf("outcomes: %v", outcomes)
	for _, k := range []string{"retain fails", "truncated: declined", "dropped", "whole"} {
		if outcomes[k] == 0 {
			t.Errorf("no %q outcome in %v", k, outcomes)
		}
	}
}

func TestRetainSummaryDeclinesAProjectionError(t *testing.T) {
	s := &Surface{Header: SessionHeader{ID: "x"}, Events: []SurfaceEvent{
		userEvent(1, "user", "", "hi"),
		rawEvent(2, "user/message", `{"source":{"kind":"user"},"content":[{"type":"text","text":"x"}`), // malformed
	}}
	if _, err := Retain(s, "x", 65536); err == nil {
		t.Fatal("Retain accepted a malformed event")
	}
	if _, _, ok := RetainSummary(summaryOf(s), "x", 65536); ok {
		t.Error("the summary answered for a surface whose projection fails")
	}
}

// TestQuotedLenOfEqualsQuotedLen checks the undecoded fast path of the
// items' tag-safe sizes against jsjson.QuotedLen of the decoded text, on
// texts with and without escapes, "<", multibyte characters, lone
// surrogates and several blocks.
func TestQuotedLenOfEqualsQuotedLen(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 7))
	fast := 0
	for range 2000 {
		var texts []string
		for range 1 + rng.IntN(3) {
			txt := randomText(rng, 40)
			if rng.IntN(2) == 0 {
				txt = strings.Map(func(r rune) rune {
					if r == '<' || r == '\\' || r == '"' || r < 0x20 {
						return 'x'
					}
					return r
				}, txt)
			}
			texts = append(texts, txt)
		}
		ev := assistantEvent(1, texts...)
		if rng.IntN(4) == 0 { // an escaped solidus, which JS writes back as "/"
			ev.Data = []byte(strings.Replace(string(ev.Data), `"text":"`, `"text":"\/`, 1))
		}
		parts, n, err := textBlocks(jsjson.ObjectField(jsjson.ObjectField(ev.Data, "message"), "content"))
		if err != nil || n == 0 {
			continue
		}
		it := projectedItem{role: roleAssistant, parts: parts, textLen: n}
		want := jsjson.QuotedLen(it.text(), true)
		if got := quotedLenOf(&it); got != want {
			t.Fatalf("texts %q: quotedLenOf %d, QuotedLen %d", texts, got, want)
		}
		if !strings.ContainsAny(strings.Join(texts, ""), "<\\\"") {
			fast++
		}
	}
	if fast < 500 {
		t.Errorf("only %d texts could take the fast path", fast)
	}
}

func TestQuotedLenOfEscapes(t *testing.T) {
	for _, lit := range []string{
		`"a\/b"`, `"a\\/b"`, `"\\u0041"`, `"\u0041<"`, `"<<\n\t\"\\"`, `"\\\/"`, `"x\ud800y"`, `"\u00e9\/"`, `"plain ü 界"`,
	} {
		body := `{"message":{"content":[{"type":"text","text":` + lit + `}]}}`
		parts, n, err := textBlocks(jsjson.ObjectField(jsjson.ObjectField([]byte(body), "message"), "content"))
		if err != nil || n == 0 {
			t.Fatalf("%s: %v", lit, err)
		}
		it := projectedItem{role: roleAssistant, parts: parts, textLen: n}
		if got, want := quotedLenOf(&it), jsjson.QuotedLen(it.text(), true); got != want {
			t.Errorf("%s: quotedLenOf %d, QuotedLen %d", lit, got, want)
		}
	}
}
