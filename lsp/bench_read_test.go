package lsp_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
	"github.com/dsh-lsp/dsh-lsp/lsp"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// BenchmarkSessionReads measures hover and dsh/prepare round trips (in
// process, the default source: the index) on 3 generated 2 MB sessions,
// each iteration either over unchanged sessions (answered from what the
// server keeps) or right after every session's modification time moved
// (the index parses them again and the answers are derived afresh).
func BenchmarkSessionReads(b *testing.B) {
	root := b.TempDir()
	infos, err := workload.Generate(root, workload.Options{Sessions: 3, CWDs: 1, Size: 2 << 20, Seed: 11}, nil)
	if err != nil {
		b.Fatal(err)
	}
	text := "see"
	for _, in := range infos {
		text += " " + reference.FormatMention(in.ID, nil)
	}
	age := time.Now().Add(-time.Hour)
	touch := func(b *testing.B) {
		b.StopTimer()
		age = age.Add(time.Millisecond)
		for _, in := range infos {
			if err := os.Chtimes(in.Path, age, age); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
	}
	touch(b)
	calls := map[string]func(s *session, uri string) error{
		"hover": func(s *session, uri string) error {
			var h json.RawMessage
			return s.Call(context.Background(), "textDocument/hover", map[string]any{
				"textDocument": map[string]any{"uri": uri}, "position": s.Pos(uri, 6)}, &h)
		},
		"prepare": func(s *session, uri string) error {
			var res json.RawMessage
			return s.Call(context.Background(), "dsh/prepare", map[string]any{"text": text}, &res)
		},
	}
	for _, name := range []string{"hover", "prepare"} {
		for _, changed := range []bool{false, true} {
			sub := name + "/unchanged"
			if changed {
				sub = name + "/touched"
			}
			b.Run(sub, func(b *testing.B) {
				s := start(b, lsp.Options{})
				if _, err := s.Initialize(map[string]any{"sessionsDir": root}); err != nil {
					b.Fatal(err)
				}
				uri := "file:///bench.dsh"
				s.Open(uri, text)
				call := calls[name]
				if err := call(s, uri); err != nil { // warm-up: the first read
					b.Fatal(err)
				}
				b.ResetTimer()
				for range b.N {
					if changed {
						touch(b)
					}
					if err := call(s, uri); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
