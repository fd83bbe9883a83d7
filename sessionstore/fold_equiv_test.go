package sessionstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript/transcripttest"
)

// This file is the oracle of the transcript fold's policies: the full load
// (Store.Load, every event kept), the streamed reads (Store.ReadTitle and
// Store.ReadSurface, only the surface kept) and the index (Indexed, record
// locations plus a resumable, persisted state) must give the same answer —
// title, surface bytes, or error text and class — for every session after
// every random change: appended batches, appended events that exercise each
// validation pass and fold rule (prunes, compactions, bad spans, unknown
// types, malformed messages and headers, legacy shapes, open turns with
// pending tool calls, titles with bad sources), truncations at any byte,
// torn zstd frames, bad lines before a later turn/end, and replacements of
// the whole file.

// foldAnswer is one path's answer for one session.
type foldAnswer struct {
	title, titleErr     string
	surface, surfaceErr string
}

func answerOf(title *string, terr error, surf []byte, serr error) foldAnswer {
	var a foldAnswer
	switch {
	case terr != nil:
		a.titleErr = fmt.Sprintf("%v [%v]", terr, KindOf(terr))
	case title != nil:
		a.title = *title
	default:
		a.title = "<none>"
	}
	if serr != nil {
		a.surfaceErr = fmt.Sprintf("%v [%v]", serr, KindOf(serr))
	} else {
		a.surface = string(surf)
	}
	return a
}

// fullAnswer answers from Store.Load (the keep-every-event policy).
func fullAnswer(s *Store, id string) foldAnswer {
	return storeAnswer(s.ReadTitle, s.ReadSurface, id)
}

// storeAnswer answers with one of the store's pairs of title and surface
// reads.
func storeAnswer(title func(context.Context, string) (*transcript.Title, error), surface func(context.Context, string) (*reference.Surface, error), id string) foldAnswer {
	ctx := context.Background()
	t, terr := title(ctx, id)
	var text *string
	if t != nil {
		x := t.Text()
		text = &x
	}
	var surf []byte
	sn, serr := surface(ctx, id)
	if serr == nil {
		surf = MarshalSurface(sn)
	}
	return answerOf(text, terr, surf, serr)
}

// indexAnswer answers from the index.
func indexAnswer(t *testing.T, x *Indexed, id string) foldAnswer {
	ctx := context.Background()
	rs, err := x.ReadTitles(ctx, []string{id})
	if err != nil || len(rs) != 1 {
		t.Fatalf("ReadTitles(%s): %v", id, err)
	}
	var surf []byte
	sn, serr := x.ReadSurface(ctx, id)
	if serr == nil {
		surf = MarshalSurface(sn)
	}
	return answerOf(rs[0].Title, rs[0].Err, surf, serr)
}

// scanOf scans g's file as the store would (nil when it cannot).
func scanOf(g *genSession, comp workload.Compression) *transcripttest.ScannedLog {
	data, err := os.ReadFile(g.path)
	if err != nil {
		return nil
	}
	var sc *transcripttest.ScannedLog
	if comp == workload.Zstd {
		sc, err = ScanZstd(data)
	} else {
		sc, err = transcripttest.ScanRaw(data)
	}
	if err != nil {
		return nil
	}
	return sc
}

// withResultContent returns a tool/result's data with the result content
// replaced (a valid prune) and, when alsoID, the message id changed too
// (an invalid one).
func withResultContent(t *testing.T, data json.RawMessage, alsoID bool) string {
	var d map[string]any
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	m := d["message"].(map[string]any)
	blk := m["content"].([]any)[0].(map[string]any)
	blk["content"] = []any{map[string]any{"type": "text", "text": "[pruned]"}}
	if alsoID {
		m["id"] = "other-id"
	}
	out, _ := json.Marshal(d)
	return string(out)
}

// foldMutation appends events that exercise one rule of the fold, given
// the next seq and the loaded log (nil when it does not load).
func foldMutation(t *testing.T, r *rand.Rand, next int64, log *transcripttest.Log) (string, []string) {
	ev := func(seq int64, typ, data string, extra string) string {
		return fmt.Sprintf(`{"type":%q,"seq":%d,"time":%d,"data":%s%s}`, typ, seq, 1786000000000+seq, data, extra)
	}
	user := func(seq int64, text string) string {
		return ev(seq, "user/message", fmt.Sprintf(`{"content":[{"type":"text","text":%q}],"source":{"kind":"user"},"role":"user","id":"u-%d"}`, text, seq), `,"surfaceOp":"append"`)
	}
	var results, nodes []int64
	if log != nil {
		nodes = log.Surface
		for _, s := range log.Surface {
			if log.Events[s].Type == "tool/result" && s < int64(log.Stored) {
				results = append(results, s)
			}
		}
	}
	switch k := r.Intn(17); k {
	case 0, 1:
		if len(results) > 0 {
			s := results[r.Intn(len(results))]
			return "valid prune", []string{
				ev(next, "compaction/prune", fmt.Sprintf(`{"shadowedRange":{"start":%d,"end":%d},"shadowedSeqs":[%d],"shadowedTokenCount":3}`, s, s, s), ""),
				ev(next+1, "tool/result", withResultContent(t, log.Events[s].Data, false), fmt.Sprintf(`,"sourceEventSeqs":[%d],"surfaceOp":{"op":"replace","start":%d,"end":%d}`, s, s, s)),
			}
		}
		return "user message", []string{user(next, "plain")}
	case 2:
		if len(results) > 0 {
			s := results[r.Intn(len(results))]
			return "prune changing the message id", []string{
				ev(next, "tool/result", withResultContent(t, log.Events[s].Data, true), fmt.Sprintf(`,"sourceEventSeqs":[%d],"surfaceOp":{"op":"replace","start":%d,"end":%d}`, s, s, s)),
			}
		}
		return "tool/result replace of a non-result", []string{ev(next, "tool/result",
			`{"turn":1,"step":1,"message":{"id":"x","role":"user","source":{"kind":"tool","callId":"c"},"content":[{"type":"tool-result","toolCallId":"c","content":[]}]}}`,
			`,"sourceEventSeqs":[0],"surfaceOp":{"op":"replace","start":0,"end":0}`)}
	case 3:
		if len(nodes) > 0 {
			i := r.Intn(len(nodes))
			j := i + r.Intn(len(nodes)-i)
			cited := make([]string, 0, j-i+1)
			for _, s := range nodes[i : j+1] {
				cited = append(cited, fmt.Sprint(s))
			}
			return "compaction checkpoint", []string{
				ev(next, "compaction/start", `{"compactionId":"c1","turn":null}`, ""),
				ev(next+1, "user/message", fmt.Sprintf(`{"content":[{"type":"text","text":"summary"}],"source":{"kind":"plugin","plugin":"compact","compactionId":"c1"},"role":"user","id":"cp-%d"}`, next+1),
					fmt.Sprintf(`,"sourceEventSeqs":[%s],"surfaceOp":{"op":"replace","start":%d,"end":%d}`, strings.Join(cited, ","), nodes[i], nodes[j])),
				ev(next+2, "compaction/end", `{"compactionId":"c1","turn":null}`, ""),
			}
		}
		return "user message", []string{user(next, "first")}
	case 4:
		return "replace naming no surface span", []string{ev(next, "user/message",
			fmt.Sprintf(`{"content":[],"source":{"kind":"user"},"role":"user","id":"r-%d"}`, next),
			fmt.Sprintf(`,"sourceEventSeqs":[0],"surfaceOp":{"op":"replace","start":%d,"end":0}`, next-1))}
	case 5:
		return "unknown event type", []string{ev(next, "future/thing", `{}`, "")}
	case 6:
		return "ignorable unknown event type", []string{ev(next, "future/thing", `{}`, `,"ignorable":true`)}
	case 7:
		return "user message without an id", []string{ev(next, "user/message", `{"content":[],"source":{"kind":"user"},"role":"user"}`, `,"surfaceOp":"append"`)}
	case 8:
		return "open turn with pending tool calls", []string{
			ev(next, "turn/start", `{"turn":77}`, ""),
			ev(next+1, "step/start", `{"turn":77,"step":1}`, ""),
			ev(next+2, "assistant/message", `{"turn":77,"step":1,"message":{"role":"assistant","content":[{"type":"tool-call","id":"k1","name":"read","arguments":"{}"},{"type":"tool-call","id":"k2","name":"read","arguments":"{}"}],"source":{"kind":"model","provider":"p","model":"m"},"id":"am"}}`, `,"sourceEventSeqs":[],"surfaceOp":"append"`),
			ev(next+3, "tool/call", `{"turn":77,"step":1,"callId":"k2","name":"read","arguments":"{}"}`, ""),
		}
	case 9:
		return "legacy turn/start and steering", []string{
			ev(next, "turn/start", `{"turn":5,"trigger":{"kind":"message"}}`, ""),
			ev(next+1, "steering/message", `{"turn":5,"content":[{"type":"text","text":"also"}],"source":{"kind":"user"}}`, `,"surfaceOp":"append"`),
			ev(next+2, "turn/end", `{"turn":5,"reason":{"kind":"aborted"}}`, ""),
		}
	case 10:
		return "legacy tool/result pair", []string{
			ev(next, "tool/result", `{"turn":1,"step":1,"callId":"lc","content":[{"type":"text","text":"a"}],"isError":false}`, `,"surfaceOp":"append"`),
			ev(next+1, "tool/result", `{"turn":1,"step":1,"callId":"lc","content":[{"type":"text","text":"b"}],"isError":false}`,
				fmt.Sprintf(`,"sourceEventSeqs":[%d],"surfaceOp":{"op":"replace","start":%d,"end":%d}`, next, next, next)),
		}
	case 11:
		return "bad line before a turn/end", []string{`{"type":"turn/start","seq":`, ev(next, "turn/end", `{"turn":1,"reason":{"kind":"completed"}}`, "")}
	case 12:
		return "title with an unknown source kind", []string{ev(next, "session/title", `{"title":"odd","messageSeqs":[],"source":{"kind":"robot"}}`, "")}
	case 13:
		return "valid title", []string{ev(next, "session/title", fmt.Sprintf(`{"title":"t%d","messageSeqs":[],"source":{"kind":"user"}}`, next), "")}
	case 14:
		return "envelope with an extra key", []string{ev(next, "step/end", `{"turn":1,"step":1}`, `,"extra":1`)}
	case 15:
		return "request/header without a model", []string{ev(next, "request/header", `{"header":{"config":{"provider":"p"}},"reason":"initial"}`, "")}
	default:
		return "turn end", []string{ev(next, "turn/end", `{"turn":77,"reason":{"kind":"completed"}}`, "")}
	}
}

// TestFoldPoliciesAgree drives random changes through a generated store
// (raw and zstd) and compares the three policies after every change, and
// an index reopened from its persisted cache every few rounds.
func TestFoldPoliciesAgree(t *testing.T) {
	t.Parallel()
	rounds := 40
	if LongTests() && !testing.Short() {
		rounds = 80
	}
	for _, comp := range []workload.Compression{workload.None, workload.Zstd} {
		t.Run(string(comp), func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			cacheDir := t.TempDir()
			ss := genStore(t, root, comp, 6, 2, 23)
			x := openIndexed(t, root, cacheDir)
			st, err := Open(root)
			if err != nil {
				t.Fatal(err)
			}
			// The full load's answer depends only on the log's bytes: it is
			// computed once per content (most rounds change one session),
			// while the policies under test read every session every round.
			fulls := map[[sha256.Size]byte]foldAnswer{}
			oracle := func(st *Store, h *genSession) foldAnswer {
				data, err := os.ReadFile(h.path)
				if err != nil {
					return fullAnswer(st, h.spec.ID)
				}
				key := sha256.Sum256(append([]byte(h.spec.ID+"\x00"), data...))
				a, ok := fulls[key]
				if !ok {
					a = fullAnswer(st, h.spec.ID)
					fulls[key] = a
				}
				return a
			}
			r := rand.New(rand.NewSource(99))
			ctx := context.Background()
			kinds := map[string]int{}
			var grown int64
			for round := 0; round < rounds; round++ {
				g := ss[r.Intn(len(ss))]
				var what string
				switch op := r.Intn(12); {
				case op < 3:
					what = "append batches"
					g.appendBatches(t, comp, 1+r.Intn(2))
				case op == 3:
					what = "truncate at a random byte"
					g.truncateRandom(r)
				case op == 4:
					what = "replace with another prefix"
					g.rewrite(t, comp, r.Intn(len(g.batches)+1))
				case op == 5:
					what = "append a torn line / frame"
					b := workload.EncodeBatch(comp, []byte(`{"type":"session/title","seq":0,"time":1,"data":{"title":"torn","messageSeqs":[],"source":{"kind":"user"}}}`+"\n"))
					appendFile(t, g.path, b[:1+r.Intn(len(b)-1)])
				default:
					sc := scanOf(g, comp)
					if sc == nil || r.Intn(4) == 0 && sc.TornBytes > 0 {
						// Start over from a clean prefix now and then, so
						// that most rounds grow a readable log.
						what = "rewrite an unscannable or torn log"
						g.rewrite(t, comp, g.written)
						break
					}
					next := int64(len(sc.Events))
					var log *transcripttest.Log
					if l, err := st.Load(ctx, g.spec.ID); err == nil {
						log = l
					}
					var lines []string
					what, lines = foldMutation(t, r, next, log)
					text := strings.Join(lines, "\n") + "\n"
					if comp == workload.Zstd && r.Intn(2) == 0 {
						// One frame per line, sometimes.
						var data []byte
						for _, l := range lines {
							data = append(data, workload.EncodeBatch(comp, []byte(l+"\n"))...)
						}
						appendFile(t, g.path, data)
					} else {
						appendFile(t, g.path, workload.EncodeBatch(comp, []byte(text)))
					}
				}
				kinds[what]++
				if err := x.Refresh(ctx); err != nil {
					t.Fatal(err)
				}
				check := func(ix *Indexed, label string) {
					for _, h := range ss {
						id := h.spec.ID
						full := oracle(st, h)
						if got := indexAnswer(t, ix, id); got != full {
							t.Fatalf("round %d (%s on %s), %s: %s differs from the full load\nindex %+v\nfull  %+v", round, what, g.spec.ID, id, label, got, full)
						}
					}
				}
				check(x, "index")
				if round%10 == 9 {
					// The persisted state resumes where it stopped.
					grown += x.Stats().Grown
					if err := x.Close(); err != nil {
						t.Fatal(err)
					}
					x = openIndexed(t, root, cacheDir)
					check(x, "index reopened from its cache")
				}
			}
			if grown += x.Stats().Grown; grown == 0 {
				t.Errorf("the index never resumed a parse: the incremental policy was not exercised")
			}
			t.Logf("mutations: %v", kinds)
		})
	}
}

// TestFoldPoliciesAgreeOnFixtures compares the policies on every session
// directory of the fixture and golden stores (legacy shapes, crash
// closers, compactions, torn tails).
func TestFoldPoliciesAgreeOnFixtures(t *testing.T) {
	roots, _ := filepath.Glob(filepath.Join("..", "testdata", "fixtures", "store-*"))
	roots = append(roots, filepath.Join("..", "testdata", "golden", "jsonl-root"))
	n := 0
	for _, src := range roots {
		root := t.TempDir()
		copyTree(t, src, root)
		st, _ := Open(root)
		x := openIndexed(t, root, t.TempDir())
		dirs, _ := filepath.Glob(filepath.Join(root, "*", "*"))
		for _, dir := range dirs {
			id, ok := DecodeSegment(filepath.Base(dir))
			if !ok {
				continue
			}
			full := fullAnswer(st, id)
			if got := indexAnswer(t, x, id); got != full {
				t.Errorf("%s: index %+v, full %+v", dir, got, full)
			}
			n++
		}
	}
	if n < 10 {
		t.Fatalf("only %d sessions compared; testdata missing?", n)
	}
}

// FuzzFoldPolicies: for any raw transcript whose header names a path, the
// full load and the index (a lazy one: no scan, no watcher) answer the
// same (title, surface bytes, or error text and class).
func FuzzFoldPolicies(f *testing.F) {
	addFixtureSeeds(f, "fixtures/store-raw/*/*/session.jsonl")
	addFixtureSeeds(f, "golden/jsonl-root/*/*/session.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return
		}
		h, err := transcript.ParseHeader(data[:i])
		if err != nil || h.ID == "" || h.CWD != nil && *h.CWD == "" {
			return
		}
		root := t.TempDir()
		path, err := SessionPath(root, h.CWD, h.ID, Raw)
		if err != nil {
			return
		}
		if os.MkdirAll(filepath.Dir(path), 0o755) != nil || os.WriteFile(path, data, 0o644) != nil {
			return // e.g. a session directory name over the file system's limit
		}
		st, _ := Open(root)
		full := fullAnswer(st, h.ID)
		x, err := OpenIndexed(root, IndexOptions{Lazy: true})
		if err != nil {
			t.Fatal(err)
		}
		defer x.Close()
		if got := indexAnswer(t, x, h.ID); got != full {
			t.Fatalf("the index differs from the full load\nindex %+v\nfull  %+v", got, full)
		}
	})
}
