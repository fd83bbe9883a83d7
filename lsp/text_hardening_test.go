package lsp_test

// Hostile text: huge documents and lines, 100k mentions, invalid
// UTF-8 and NUL bytes, positions past the end, overlapping and
// out-of-range edits. The server answers every request (or refuses it with
// a clear error), never panics, and its copy of the document stays exactly
// what the LSP rules say. Time and peak heap are logged; the full-size
// numbers are measured by stress/run.sh (-hostile-scale 1) and recorded in
// stress/README.md. No timing assertions here.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/dsh-lsp/dsh-lsp/lsp/lsptest"
	"github.com/dsh-lsp/dsh-lsp/lsp/wire"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// hostileScale scales the sizes of TestHostileText: 1 is the issue's
// 50 MB document, 10 MB line and 100k mentions.
var hostileScale = flag.Float64("hostile-scale", 0.05, "size factor of TestHostileText (1 = 50 MB document, 10 MB line, 100k mentions)")

// heapPeak samples the heap while f runs and returns the peak growth.
func heapPeak(f func()) (peak uint64, elapsed time.Duration) {
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var max atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > max.Load() {
				max.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	start := time.Now()
	f()
	elapsed = time.Since(start)
	close(stop)
	wg.Wait()
	if m := max.Load(); m > base.HeapInuse {
		peak = m - base.HeapInuse
	}
	return peak, elapsed
}

// serverText returns the server's copy of an open document (dsh/prepare's
// content is the text itself when it has no mention).
func serverText(t *testing.T, s *session, uri string) string {
	t.Helper()
	var res struct {
		Content string `json:"content"`
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := s.Call(ctx, "dsh/prepare", map[string]any{"textDocument": map[string]any{"uri": uri}}, &res); err != nil {
		t.Fatalf("dsh/prepare %s: %v", uri, err)
	}
	return res.Content
}

// stillServes checks that a plain request is answered.
func stillServes(t *testing.T, s *session) {
	t.Helper()
	var items []reference.CandidateItem
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := s.Call(ctx, "dsh/candidates", map[string]any{"query": "renaming"}, &items); err != nil || len(items) != 1 {
		t.Fatalf("server stopped serving: %v %v", err, items)
	}
}

func pos(line, char uint32) map[string]any {
	return map[string]any{"line": line, "character": char}
}

func TestHostileText(t *testing.T) {
	scale := *hostileScale
	docBytes := int(50e6 * scale)
	lineBytes := int(10e6 * scale)
	mentions := int(100e3 * scale)
	ctx := context.Background()

	t.Run("huge document", func(t *testing.T) {
		s := startInit(t, map[string]any{"sessionsDir": hardeningStore})
		line := strings.Repeat("lorem ipsum dolor sit amet ", 3) + "\n"
		text := strings.Repeat(line, docBytes/len(line)) + "see @Ren"
		uri := "file:///huge.dsh"
		peak, el := heapPeak(func() {
			s.Open(uri, text)
			var list wire.CompletionList
			if err := s.Call(ctx, "textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": s.Pos(uri, len(text))}, &list); err != nil {
				t.Fatalf("completion at the end of a %d-byte document: %v", len(text), err)
			}
			if n := len(candidateItems(list.Items)); n != 1 {
				t.Fatalf("completion in a huge document: %d candidate items, want 1", n)
			}
			s.Append(uri, "x")
			if got := serverText(t, s, uri); len(got) != len(text)+1 {
				t.Fatalf("server copy has %d bytes, want %d", len(got), len(text)+1)
			}
		})
		t.Logf("document %d bytes: open+completion+edit+prepare in %v, peak heap growth %d MB", len(text), el, peak>>20)
		stillServes(t, s)
	})

	t.Run("huge line", func(t *testing.T) {
		s := startInit(t, map[string]any{"sessionsDir": hardeningStore})
		text := strings.Repeat("x", lineBytes) + " @Ren"
		uri := "file:///line.dsh"
		peak, el := heapPeak(func() {
			s.Open(uri, text)
			for _, p := range []protocol.Position{s.Pos(uri, len(text)), s.Pos(uri, lineBytes/2), {Line: 0, Character: 4294967295}} {
				var list wire.CompletionList
				if err := s.Call(ctx, "textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": p}, &list); err != nil {
					t.Fatalf("completion at %v of a %d-byte line: %v", p, len(text), err)
				}
			}
			if err := s.Call(ctx, "textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": pos(0, uint32(lineBytes/2))}, nil); err != nil && lsptest.RPCError(err) == nil {
				t.Fatalf("hover: %v", err)
			}
		})
		t.Logf("line %d bytes: open+3 completions+hover in %v, peak heap growth %d MB", len(text), el, peak>>20)
		stillServes(t, s)
	})

	t.Run("many mentions", func(t *testing.T) {
		s := startInit(t, map[string]any{"sessionsDir": hardeningStore})
		var b strings.Builder
		for i := range mentions {
			id := hardeningID
			if i%2 == 1 {
				id = fmt.Sprintf("missing-%d", i)
			}
			label := fmt.Sprintf("l%d", i)
			b.WriteString(reference.FormatMention(id, &label) + " ")
			if i%10 == 9 {
				b.WriteString("\n")
			}
		}
		text := b.String()
		uri := "file:///mentions.dsh"
		peak, el := heapPeak(func() {
			s.Open(uri, text)
			// Diagnostics for every mention past maxReferences, and
			// prepare refuses with TOO_MANY before reading anything.
			s.Await(lsptest.Expectation{Desc: "diagnostics published", Check: func(st lsptest.State) bool {
				p, ok := st.Diags[uri]
				return ok && len(p.Diagnostics) > 0
			}})
			err := s.Call(ctx, "dsh/prepare", map[string]any{"textDocument": map[string]any{"uri": uri}}, nil)
			if lsptest.ErrorDataCode(err) != string(reference.CodeTooMany) {
				t.Fatalf("prepare with %d mentions: %v, want SESSION_REFERENCE_TOO_MANY", mentions, err)
			}
		})
		p, _ := s.Diagnostics(uri)
		t.Logf("%d mentions (%d bytes): open+diagnostics(%d)+prepare in %v, peak heap growth %d MB", mentions, len(text), len(p.Diagnostics), el, peak>>20)
		stillServes(t, s)
	})

	t.Run("invalid UTF-8 and NUL", func(t *testing.T) {
		s := startInit(t, map[string]any{"sessionsDir": hardeningStore})
		uri := "file:///bytes.dsh"
		// Raw invalid bytes cannot cross JSON (they arrive as U+FFFD);
		// NUL and lone surrogate escapes can.
		raw := json.RawMessage(`{"textDocument":{"uri":"` + uri + `","languageId":"dsh","version":1,"text":"a\u0000b\ud800c\udfff\ufffd` + "\xff\xfe" + ` @Ren"}}`)
		s.Notify("textDocument/didOpen", raw)
		text := serverText(t, s, uri)
		if !strings.HasPrefix(text, "a\x00b") || !strings.HasSuffix(text, " @Ren") {
			t.Fatalf("server copy %q", text)
		}
		for _, p := range []map[string]any{pos(0, 0), pos(0, 3), pos(0, 100), pos(0, 4294967295), pos(1, 0)} {
			var list wire.CompletionList
			if err := s.Call(ctx, "textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": p}, &list); err != nil {
				t.Fatalf("completion at %v: %v", p, err)
			}
		}
		stillServes(t, s)
	})

	t.Run("positions past the end", func(t *testing.T) {
		s := startInit(t, map[string]any{"sessionsDir": hardeningStore})
		uri := "file:///short.dsh"
		s.Open(uri, "one\ntwo @Ren")
		for _, method := range []string{"textDocument/completion", "textDocument/hover", "textDocument/codeAction"} {
			for _, p := range []map[string]any{pos(2, 0), pos(3, 0), pos(4294967295, 4294967295), pos(0, 4294967295)} {
				params := map[string]any{"textDocument": map[string]any{"uri": uri}, "position": p,
					"range": map[string]any{"start": p, "end": p}, "context": map[string]any{"diagnostics": []any{}}}
				err := s.Call(ctx, method, params, nil)
				if err != nil && lsptest.RPCError(err) == nil {
					t.Fatalf("%s at %v: %v", method, p, err)
				}
				if e := lsptest.RPCError(err); e != nil && (e.Code != -32602 || e.Message == "") {
					t.Errorf("%s at %v: error %d %q, want -32602 with a message", method, p, e.Code, e.Message)
				}
			}
		}
		stillServes(t, s)
	})

	t.Run("overlapping and out-of-range edits", func(t *testing.T) {
		s := startInit(t, map[string]any{"sessionsDir": hardeningStore}, "utf-8")
		uri := "file:///edits.dsh"
		s.Open(uri, "hello\nworld\n")
		type change = map[string]any
		rng := func(l1, c1, l2, c2 uint32) map[string]any {
			return map[string]any{"start": pos(l1, c1), "end": pos(l2, c2)}
		}
		send := func(version int, changes ...change) {
			s.Notify("textDocument/didChange", map[string]any{
				"textDocument":   map[string]any{"uri": uri, "version": version},
				"contentChanges": changes,
			})
		}
		steps := []struct {
			changes []change
			want    string
		}{
			// Applied in order: each range refers to the text after the
			// previous change, so "overlapping" ranges compose.
			{[]change{{"range": rng(0, 0, 0, 5), "text": "HELLO"}, {"range": rng(0, 2, 1, 2), "text": "_"}}, "HE_rld\n"},
			// Character past the line end clamps to the line end.
			{[]change{{"range": rng(0, 100, 0, 200), "text": "!"}}, "HE_rld!\n"},
			// Line past the end clamps to the end of the text.
			{[]change{{"range": rng(99, 0, 4294967295, 4294967295), "text": "tail"}}, "HE_rld!\ntail"},
			// A whole-text replacement, then an edit of the new text.
			{[]change{{"text": "abc"}, {"range": rng(0, 1, 0, 2), "text": "\x00"}}, "a\x00c"},
		}
		for i, st := range steps {
			send(i+2, st.changes...)
			if got := serverText(t, s, uri); got != st.want {
				t.Fatalf("step %d: server copy %q, want %q", i, got, st.want)
			}
		}
		// A reversed range is refused with a visible error; the text stays.
		send(10, change{"range": rng(0, 2, 0, 1), "text": "x"})
		s.Await(lsptest.ShownMessage(protocol.MessageTypeError, "before its start"))
		if got := serverText(t, s, uri); got != "a\x00c" {
			t.Fatalf("after a refused change: %q", got)
		}
		stillServes(t, s)
	})
}
