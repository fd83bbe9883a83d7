// Command preparepass measures a cold dsh/prepare of large sources against
// a plain decode of the same bytes, in the same run:
//
//	go run ./bench/preparepass [-runs 3] STORE
//
// STORE holds the sources (e.g. bench/gen -sessions 3 -size 20MB). Each
// run measures, best of -runs:
//   - floor: bench/workload.Floor in "decode" mode (one goroutine reads
//     each transcript, zstd-decoding it, and json.Unmarshals every line
//     into an any);
//   - store: reference.Service.PrepareText citing every session, over a
//     lazy sessionstore.Indexed (IndexOptions.Lazy: only the cited
//     sessions are parsed, as the CLI's prepare reads them);
//   - index: the same over a fresh sessionstore.Indexed without a cache,
//     right after it opens, as a server started without a cache answers
//     (the sources are parsed on demand while the first pass runs).
//
// Wall and CPU time (getrusage) are printed as JSON with the ratios to the
// floor.
package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
	"github.com/dsh-lsp/dsh-lsp/internal/cputime"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/storetest"
)

func main() {
	runs := flag.Int("runs", 3, "runs of each measurement; the fastest is reported")
	flag.Parse()
	if flag.NArg() != 1 {
		fail(fmt.Errorf("usage: preparepass [-runs N] STORE"))
	}
	root := flag.Arg(0)
	paths := workload.Transcripts(root)
	st, err := storetest.OpenSynced(root, 0)
	if err != nil {
		fail(err)
	}
	hs, err := st.ListSessions(context.Background())
	if err != nil || len(hs) == 0 {
		fail(fmt.Errorf("%s: no sessions (%v)", root, err))
	}
	var mentions []string
	for i, h := range hs {
		mentions = append(mentions, fmt.Sprintf("@[src%d](dsh-session:%s)", i, base64.RawURLEncoding.EncodeToString([]byte(`"`+h.ID+`"`))))
	}
	text := strings.Join(mentions, " and ") + " please"
	cwd := "/bench"
	target := reference.Target{CWD: &cwd}
	prepare := func(src reference.Source) {
		svc, err := reference.NewService(src, reference.DefaultConfig())
		if err != nil {
			fail(err)
		}
		pt, err := svc.PrepareText(context.Background(), target, text)
		if err != nil {
			fail(err)
		}
		if pt == nil {
			fail(fmt.Errorf("no prepared text"))
		}
	}
	type m struct{ wall, cpu time.Duration }
	best := map[string]m{}
	keep := func(name string, wall, cpu time.Duration) {
		b, ok := best[name]
		if !ok || wall < b.wall {
			b.wall = wall
		}
		if !ok || cpu < b.cpu {
			b.cpu = cpu
		}
		best[name] = b
	}
	var plain int64
	for i := 0; i < max(*runs, 1); i++ {
		c0, t0 := cpuTime(), time.Now()
		r, err := workload.Floor(paths, workload.FloorDecode)
		if err != nil {
			fail(err)
		}
		plain = r.PlainBytes
		keep("floor", time.Since(t0), cpuTime()-c0)

		c0, t0 = cpuTime(), time.Now()
		lazy, err := sessionstore.OpenIndexed(root, sessionstore.IndexOptions{Lazy: true})
		if err != nil {
			fail(err)
		}
		prepare(lazy)
		lazy.Close()
		keep("store", time.Since(t0), cpuTime()-c0)

		c0, t0 = cpuTime(), time.Now()
		x, err := sessionstore.OpenIndexed(root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache, RefreshInterval: time.Hour})
		if err != nil {
			fail(err)
		}
		prepare(x)
		keep("index", time.Since(t0), cpuTime()-c0)
		x.Close()
	}
	out := map[string]any{"store": root, "sources": len(hs), "plainBytes": plain}
	for name, b := range best {
		out[name+"Ms"] = ms(b.wall)
		out[name+"CpuMs"] = ms(b.cpu)
		if name != "floor" {
			out[name+"Ratio"] = float64(b.wall) / float64(best["floor"].wall)
			out[name+"CpuRatio"] = float64(b.cpu) / float64(best["floor"].cpu)
		}
	}
	json.NewEncoder(os.Stdout).Encode(out)
}

// cpuTime is the process's user + system CPU time so far.
func cpuTime() time.Duration { return cputime.Process() }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "preparepass:", err)
	os.Exit(2)
}
