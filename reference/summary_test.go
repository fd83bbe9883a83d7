package reference

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// summaryOf summarises a surface as a source folding it would.
func summaryOf(s *Surface) *SurfaceSummary {
	sum := &SurfaceSummary{Header: s.Header, CapturedThroughSeq: s.CapturedThroughSeq}
	for _, ev := range s.Events {
		sum.Items = append(sum.Items, SurfaceItemOf(ev.Type, ev.Data, nil))
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

// TestSurfaceItemSizesEqualTheProjectedText checks the sizes SurfaceItemOf
// measures from the raw literals (jsjson.LiteralLens, or the decoded text
// when a literal needs it) against the text Retain's projection decodes:
// its UTF-8 length and its tag-safe JSON string's length, over user,
// checkpoint and assistant messages of one to three blocks whose literals
// mix raw "<", every short escape, \u escapes, lone surrogates,
// multibyte characters and invalid UTF-8.
func TestSurfaceItemSizesEqualTheProjectedText(t *testing.T) {
	pieces := []string{"a", "b", " ", "<", ">", "&", `\n`, `\t`, `\"`, `\\`, `\/`, `\b`, `\f`, `\r`,
		"é", "界", "🙂", "\u2028", "\ufeff", `\u0041`, `\u003c`, `\ud800`, `\udc00x`, "\xff", "\xe2\x82", "\xed\xa0\x80"}
	rng := rand.New(rand.NewPCG(22, 7))
	literal := func(fast bool) string {
		var sb strings.Builder
		sb.WriteByte('"')
		for range rng.IntN(40) {
			p := pieces[rng.IntN(len(pieces))]
			if rng.IntN(3) > 0 {
				p = string(rune('a' + rng.IntN(26)))
			}
			if fast && (strings.Contains(p, `\u`) || !utf8.ValidString(p)) {
				p = "x"
			}
			sb.WriteString(p)
		}
		sb.WriteByte('"')
		return sb.String()
	}
	fast := 0
	for i := range 3000 {
		allFast := rng.IntN(2) == 0
		var blocks []string
		for range 1 + rng.IntN(3) {
			lit := literal(allFast)
			if _, _, ok := jsjson.LiteralLens([]byte(lit)); allFast && !ok {
				t.Fatalf("%s: not measured in one pass", lit)
			}
			blocks = append(blocks, `{"type":"text","text":`+lit+`}`)
		}
		content := "[" + strings.Join(blocks, ",") + "]"
		ev := SurfaceEvent{Seq: int64(i)}
		switch rng.IntN(3) {
		case 0:
			ev.Type, ev.Data = eventUserMessage, json.RawMessage(`{"source":{"kind":"user"},"content":`+content+`}`)
		case 1:
			ev.Type, ev.Data = eventUserMessage, json.RawMessage(`{"source":{"kind":"plugin","plugin":"compact"},"content":`+content+`}`)
		default:
			ev.Type, ev.Data = eventAssistantMessage, json.RawMessage(`{"message":{"content":`+content+`}}`)
		}
		items, err := projectSurface(&Surface{Events: []SurfaceEvent{ev}})
		if err != nil {
			t.Fatalf("%s: %v", ev.Data, err)
		}
		got := SurfaceItemOf(ev.Type, ev.Data, nil)
		if len(items) == 0 {
			if got.Kind != ItemNone {
				t.Fatalf("%s: %+v, projected to nothing", ev.Data, got)
			}
			continue
		}
		text := items[0].text()
		if got.TextLen != len(text) || got.QuotedLen != jsjson.QuotedLen(text, true) || got.Checkpoint != items[0].checkpoint {
			t.Fatalf("%s: %+v, text %q (length %d, quoted %d)", ev.Data, got, text, len(text), jsjson.QuotedLen(text, true))
		}
		if allFast {
			fast++
		}
	}
	if fast < 1000 {
		t.Errorf("only %d items had every literal on the one-pass path", fast)
	}
}

// BenchmarkSurfaceItemOf sizes the messages a first indexing pass folds:
// prose of about 2 KB with line breaks, a few "<" and 20 % multibyte
// characters, as an assistant message of two blocks and a user message.
func BenchmarkSurfaceItemOf(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"the", "index", "session", "<tag>", "données", "прочитать", "読み込み", "reference", "line\\n", "quote\\\"d"}
	text := func() string {
		var sb strings.Builder
		for sb.Len() < 2048 {
			sb.WriteString(words[rng.IntN(len(words))])
			sb.WriteByte(' ')
		}
		return `"` + sb.String() + `"`
	}
	events := []SurfaceEvent{
		{Type: eventAssistantMessage, Data: json.RawMessage(`{"turn":1,"step":1,"message":{"role":"assistant","content":[{"type":"text","text":` + text() + `},{"type":"text","text":` + text() + `}],"id":"a1"}}`)},
		{Type: eventUserMessage, Data: json.RawMessage(`{"content":[{"type":"text","text":` + text() + `}],"source":{"kind":"user"},"role":"user","id":"u1"}`)},
	}
	size := 0
	for _, ev := range events {
		size += len(ev.Data)
	}
	// Each event's record and its tape, as the index reads it.
	tapes := make([]*jsjson.Tape, len(events))
	for i, ev := range events {
		line := []byte(`{"type":"` + ev.Type + `","seq":1,"time":1,"data":` + string(ev.Data) + `}`)
		entries, held, ok, _ := jsjson.CheckObjectTape(line, nil)
		if !ok || !held {
			b.Fatal("no tape")
		}
		tapes[i] = &jsjson.Tape{Text: line, Entries: entries}
		events[i].Data = tapes[i].ObjectField(line, "data")
	}
	for _, read := range []string{"bytes", "tape"} {
		b.Run(read, func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				for i, ev := range events {
					var t *jsjson.Tape
					if read == "tape" {
						t = tapes[i]
					}
					if SurfaceItemOf(ev.Type, ev.Data, t).Kind == ItemNone {
						b.Fatal("projected to nothing")
					}
				}
			}
		})
	}
}
