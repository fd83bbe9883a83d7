package sessionstore_test

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// liveLog is a deterministic current-format log: user/assistant messages,
// packed text-chunks rows and titles, grouped into flush batches.
type liveLog struct {
	batches [][]string // lines (without "\n") per batch
	surface []int64    // surface seqs in order (all appends)
	seqs    int64
}

func newLiveLog(id string, batches int, r *rand.Rand) *liveLog {
	l := &liveLog{}
	for b := 0; b < batches; b++ {
		var lines []string
		for n := 1 + r.Intn(4); n > 0; n-- {
			seq := l.seqs
			s := strconv.FormatInt(seq, 10)
			switch r.Intn(4) {
			case 0:
				lines = append(lines, `{"type":"text-chunks","seq0":`+s+`,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1,2],"texts":["a","b\n","c"]}}`)
				l.seqs += 3
			case 1:
				lines = append(lines, `{"type":"session/title","seq":`+s+`,"time":5,"data":{"title":"t`+s+`","messageSeqs":[],"source":{"kind":"fallback"}}}`)
				l.seqs++
			case 2:
				lines = append(lines, `{"type":"assistant/message","seq":`+s+`,"time":5,"data":{"turn":1,"step":1,"message":{"role":"assistant","content":[{"type":"text","text":"a`+s+`"}],"source":{"kind":"model","provider":"p","model":"m"},"id":"a`+s+`"}},"surfaceOp":"append"}`)
				l.surface = append(l.surface, seq)
				l.seqs++
			default:
				lines = append(lines, `{"type":"user/message","seq":`+s+`,"time":5,"data":{"content":[{"type":"text","text":"u`+s+` `+id+`"}],"source":{"kind":"user"},"role":"user","id":"u`+s+`"},"surfaceOp":"append"}`)
				l.surface = append(l.surface, seq)
				l.seqs++
			}
		}
		l.batches = append(l.batches, lines)
	}
	return l
}

// expectedSurface returns the surface seqs of the prefix of n events.
func (l *liveLog) expectedSurface(n int64) []int64 {
	var out []int64
	for _, s := range l.surface {
		if s < n {
			out = append(out, s)
		}
	}
	return out
}

// writePieces appends data to f in 1–3 pieces (a reader may see any cut).
// After each piece it waits for one completed read.
// It reports false when a reader failed.
func writePieces(t *testing.T, f *os.File, data []byte, r *rand.Rand, readDone, failed chan struct{}) bool {
	for len(data) > 0 {
		n := 1 + r.Intn(len(data))
		if _, err := f.Write(data[:n]); err != nil {
			t.Error(err)
			return false
		}
		data = data[n:]
		select { // drop a read that finished before this piece
		case <-readDone:
		default:
		}
		select {
		case <-readDone:
		case <-failed:
			return false
		}
	}
	return true
}

// TestConcurrentAppend has a writer append to a raw and a zstd session in
// partial writes (torn lines and torn frames) while readers list, read
// surfaces and titles: no read ever fails, and every read sees a
// consistent, growing prefix of what was written.
func TestConcurrentAppend(t *testing.T) {
	t.Parallel()
	for _, enc := range []sessionstore.Encoding{sessionstore.Raw, sessionstore.Zstd} {
		t.Run(enc.String(), func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			r := rand.New(rand.NewSource(42))
			const id = "live"
			// 20 batches (40 in CI: DSH_LONG_TESTS), each written in
			// random pieces (torn lines and frames) with a read after
			// every piece: a few hundred torn states per encoding. The
			// readers spin for the whole run, so the log's length is what
			// the test costs.
			batches := 20
			if sessionstore.LongTests() {
				batches = 40
			}
			log := newLiveLog(id, batches, r)
			path, _ := sessionstore.SessionPath(root, nil, id, enc)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			hdr := `{"type":"session","version":0,"id":"live","createdAt":7,"delegationDepth":0}` + "\n"
			frame := func(s string) []byte {
				if enc == sessionstore.Zstd {
					return zstdFrames(t, r.Intn(2) == 0, s)
				}
				return []byte(s)
			}
			// The header is written before readers start, like dsh's
			// hard-linked first batch; a missing header is tested elsewhere.
			if _, err := f.Write(frame(hdr)); err != nil {
				t.Fatal(err)
			}
			st, _ := sessionstore.Open(root)
			var done atomic.Bool
			var wg sync.WaitGroup
			var reads atomic.Int64
			// readDone lets the writer wait for a read after each partial
			// write, so reads really interleave with torn states.
			readDone := make(chan struct{}, 1)
			// failed stops the writer when a reader gives up.
			failed := make(chan struct{})
			var failOnce sync.Once
			for reader := 0; reader < 3; reader++ {
				wg.Add(1)
				go func(reader int) {
					defer wg.Done()
					ctx := context.Background()
					last := int64(-1)
					for {
						finished := done.Load()
						if err := checkLiveRead(ctx, st, log, &last, reader); err != nil {
							t.Error(err)
							failOnce.Do(func() { close(failed) })
							return
						}
						reads.Add(1)
						select {
						case readDone <- struct{}{}:
						default:
						}
						if finished {
							return
						}
					}
				}(reader)
			}
			for _, b := range log.batches {
				text := ""
				for _, line := range b {
					text += line + "\n"
				}
				if !writePieces(t, f, frame(text), r, readDone, failed) {
					break
				}
			}
			done.Store(true)
			wg.Wait()
			var last int64 = -1
			if err := checkLiveRead(context.Background(), st, log, &last, -1); err != nil {
				t.Fatal(err)
			}
			if last != log.seqs-1 {
				t.Errorf("final read captured through %d, want %d", last, log.seqs-1)
			}
			t.Logf("%d concurrent reads", reads.Load())
		})
	}
}

func checkLiveRead(ctx context.Context, st *sessionstore.Store, log *liveLog, last *int64, reader int) error {
	hs, err := st.ListSessions(ctx)
	if err != nil || len(hs) != 1 {
		return fmt.Errorf("reader %d: listing %v, %v", reader, hs, err)
	}
	s, err := st.ReadSurface(ctx, "live")
	if err != nil {
		return fmt.Errorf("reader %d: ReadSurface: %v", reader, err)
	}
	n := int64(0)
	if s.CapturedThroughSeq != nil {
		n = *s.CapturedThroughSeq + 1
	}
	if n-1 < *last {
		return fmt.Errorf("reader %d: captured through %d after %d", reader, n-1, *last)
	}
	*last = n - 1
	want := log.expectedSurface(n)
	if len(s.Events) != len(want) {
		return fmt.Errorf("reader %d: %d surface events for prefix %d, want %d", reader, len(s.Events), n, len(want))
	}
	for i, e := range s.Events {
		if e.Seq != want[i] {
			return fmt.Errorf("reader %d: surface[%d] seq %d, want %d", reader, i, e.Seq, want[i])
		}
	}
	titles, err := st.ReadTitles(ctx, []string{"live"})
	if err != nil || len(titles) != 1 || titles[0].Err != nil {
		return fmt.Errorf("reader %d: titles %+v, %v", reader, titles, err)
	}
	return nil
}
