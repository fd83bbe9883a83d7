package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
	"github.com/dsh-lsp/dsh-lsp/lsp"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/storetest"
)

// pipeConn is the server's end of two in-memory pipes.
type pipeConn struct {
	io.Reader
	io.Writer
	closers []io.Closer
}

func (p pipeConn) Close() error {
	for _, c := range p.closers {
		c.Close()
	}
	return nil
}

// inProcess is a server running in this process over OS pipes (as with
// stdio: kernel-buffered) with the real LSP framing.
type inProcess struct {
	*client
	toServer   *os.File
	fromServer *os.File
	done       chan int
}

func startInProcess(opts lsp.Options) *inProcess {
	c2sR, c2sW, err := os.Pipe()
	if err != nil {
		fatal(err)
	}
	s2cR, s2cW, err := os.Pipe()
	if err != nil {
		fatal(err)
	}
	stream := jsonrpc2.NewHeaderStream(pipeConn{Reader: c2sR, Writer: s2cW, closers: []io.Closer{c2sR, s2cW}})
	p := &inProcess{toServer: c2sW, fromServer: s2cR, done: make(chan int, 1)}
	go func() { p.done <- lsp.New(opts).Serve(context.Background(), stream) }()
	p.client = newClient(s2cR, c2sW)
	return p
}

// disconnect closes the client's ends (a client that goes away) and waits
// for Serve to return.
func (p *inProcess) disconnect(limit time.Duration) (int, error) {
	p.toServer.Close()
	p.fromServer.Close()
	select {
	case code := <-p.done:
		return code, nil
	case <-time.After(limit):
		return -1, fmt.Errorf("server still running %v after the client disconnected", limit)
	}
}

// sources generates (once) the 3 large prepare sources plus 500 small
// sessions in the same cwd, and returns the root and the large ids.
var sources struct {
	once sync.Once
	root string
	ids  []string
	err  error
}

// hashedSources returns the large sources (ensureSources, next to dir),
// their session ids and the store's tree hash before the phase runs (the
// phase checks that the files did not change).
func hashedSources(dir string) (root string, ids []string, before map[string]string, err error) {
	if root, ids, err = ensureSources(filepath.Join(filepath.Dir(dir), "sources")); err != nil {
		return
	}
	before, err = hashTree(root)
	return
}

func ensureSources(root string) (string, []string, error) {
	sources.once.Do(func() {
		sources.root = root
		start := time.Now()
		infos, err := workload.Generate(root, workload.Options{Sessions: 3, CWDs: 1, Size: parseSize(*sourceSize),
			Compression: workload.Zstd, Multibyte: 0.2, Seed: 8}, nil)
		if err != nil {
			sources.err = err
			return
		}
		for _, in := range infos {
			sources.ids = append(sources.ids, in.ID)
		}
		if _, err := workload.Generate(root, workload.Options{Sessions: 500, CWDs: 1, Turns: 2,
			Compression: workload.Zstd, Multibyte: 0.2, Seed: 9}, nil); err != nil {
			sources.err = err
			return
		}
		fmt.Fprintf(os.Stderr, "stress: generated 3 x %s sources + 500 small sessions in %v\n", *sourceSize, time.Since(start).Round(time.Millisecond))
	})
	return sources.root, sources.ids, sources.err
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[min(len(d)-1, int(float64(len(d))*p))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// waitGoroutines waits until the goroutine count is at most limit.
func waitGoroutines(limit int, within time.Duration) int {
	deadline := time.Now().Add(within)
	for {
		n := runtime.NumGoroutine()
		if n <= limit || time.Now().After(deadline) {
			return n
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// serverOptions are the in-process server's options: with -source
// default, what the dsh-lsp binary uses; store or indexed force the plain
// store or the index.
func serverOptions(root string) lsp.Options {
	opts := lsp.Options{SessionsDir: root}
	switch *sourceKind {
	case "store":
		opts.OpenSource = func(root string) (lsp.Source, error) { return storetest.OpenSynced(root, 0) }
	case "indexed":
		opts.OpenSource = func(root string) (lsp.Source, error) {
			return sessionstore.OpenIndexed(root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache})
		}
	}
	return opts
}

// runLoad: completion requests at -rate for -duration, half of them
// cancelled right after sending, while prepare runs in a loop over the 3
// large sources.
func runLoad(dir string) error {
	root, ids, before, err := hashedSources(dir)
	if err != nil {
		return err
	}
	runtime.GC()
	baseline := runtime.NumGoroutine()

	srv := startInProcess(serverOptions(root))
	if err := srv.initialize(map[string]any{"sessionsDir": root}); err != nil {
		return err
	}
	uri := "file:///load.dsh"
	if err := srv.open(uri, "ask @"); err != nil {
		return err
	}
	prepText := "compare"
	for _, id := range ids {
		prepText += " " + reference.FormatMention(id, nil)
	}

	// Prepare loop.
	stop := make(chan struct{})
	var prepWG sync.WaitGroup
	var prepLat []time.Duration
	var prepErr error
	prepareLoop := func() {
		defer prepWG.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			t0 := time.Now()
			var res struct {
				References []any `json:"references"`
			}
			if err := srv.call("dsh/prepare", map[string]any{"text": prepText}, &res); err != nil {
				prepErr = err
				return
			}
			if len(res.References) != len(ids) {
				prepErr = fmt.Errorf("prepare returned %d references, want %d", len(res.References), len(ids))
				return
			}
			prepLat = append(prepLat, time.Since(t0))
		}
	}
	if *withPrepare {
		prepWG.Add(1)
		go prepareLoop()
	}

	// Cold start: the first completion waits for the first store scan; it
	// is reported apart from the flood's steady state.
	t0 := time.Now()
	if err := srv.call("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": uri},
		"position": map[string]any{"line": 0, "character": 5}}, nil); err != nil {
		return fmt.Errorf("first completion: %w", err)
	}
	coldStart := time.Since(t0)

	// Completion flood.
	var mu sync.Mutex
	var lat []time.Duration
	var sent, cancelled, completed int
	var respBytes int64
	var otherErrs []string
	var wg sync.WaitGroup
	params := map[string]any{"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": 0, "character": 5}}
	// Request i is due at start + i/rate; a sender that falls behind
	// catches up without sleeping (the achieved rate is reported).
	interval := time.Second / time.Duration(*rate)
	begin := time.Now()
	for i := 0; ; i++ {
		due := begin.Add(time.Duration(i) * interval)
		if due.Sub(begin) >= *duration {
			break
		}
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		t0 := time.Now()
		id, ch, err := srv.start("textDocument/completion", params)
		if err != nil {
			return fmt.Errorf("sending completion: %w", err)
		}
		sent++
		if sent%2 == 0 {
			srv.notify("$/cancelRequest", map[string]any{"id": id})
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, ok := <-ch
			d := time.Since(t0)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case !ok:
				otherErrs = append(otherErrs, "connection closed before the answer")
			case r.Err != nil && r.Err.Code == -32800:
				cancelled++
			case r.Err != nil:
				otherErrs = append(otherErrs, r.Err.Error())
			default:
				completed++
				respBytes += int64(len(r.Result))
				lat = append(lat, d)
			}
		}()
	}
	flooded := time.Now()
	sendTime := flooded.Sub(begin)
	waited := make(chan struct{})
	go func() { wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(60 * time.Second):
		failf("load: %d completion requests unanswered 60s after the flood", sent-completed-cancelled-len(otherErrs))
	}
	drain := time.Since(flooded)
	close(stop)
	prepWG.Wait()
	if prepErr != nil {
		failf("load: prepare failed under load: %v", prepErr)
	}

	if err := srv.call("shutdown", nil, nil); err != nil {
		failf("load: shutdown: %v", err)
	}
	srv.notify("exit", nil)
	code, err := srv.disconnect(10 * time.Second)
	if err != nil {
		failf("load: %v", err)
	} else if code != 0 {
		failf("load: exit code %d after shutdown+exit, want 0", code)
	}
	runtime.GC()
	after := waitGoroutines(baseline+*goroutineOK, 10*time.Second)
	if after > baseline+*goroutineOK {
		buf := make([]byte, 1<<20)
		failf("load: goroutine leak: %d before, %d after\n%s", baseline, after, buf[:runtime.Stack(buf, true)])
	}
	if len(otherErrs) > 0 {
		failf("load: %d errors other than cancellation, first: %s", len(otherErrs), otherErrs[0])
	}
	p99 := percentile(lat, 0.99)
	if *maxP99 > 0 && p99 > *maxP99 {
		failf("load: completion p99 %v exceeds %v", p99, *maxP99)
	}
	afterHash, err := hashTree(root)
	if err != nil {
		return err
	}
	if d := sameTree(before, afterHash); len(d) > 0 {
		failf("load: store files changed: %v", d)
	}
	report("load", map[string]any{
		"durationS": duration.Seconds(), "ratePerS": *rate, "sent": sent, "completed": completed, "cancelled": cancelled,
		"otherErrors": len(otherErrs), "drainMs": ms(drain),
		"completionP50Ms": ms(percentile(lat, 0.5)), "completionP99Ms": ms(p99), "completionMaxMs": ms(percentile(lat, 1)),
		"prepares": len(prepLat), "prepareP50Ms": ms(percentile(prepLat, 0.5)), "prepareP99Ms": ms(percentile(prepLat, 0.99)),
		"sourceSize": *sourceSize, "source": *sourceKind, "achievedRatePerS": int(float64(sent) / sendTime.Seconds()), "sendS": sendTime.Seconds(), "firstCompletionMs": ms(coldStart), "responseBytesAvg": respBytes / max(1, int64(completed)), "peakRSSMB": peakRSS() >> 20,
		"goroutinesBefore": baseline, "goroutinesAfter": after, "storeUnchanged": len(sameTree(before, afterHash)) == 0,
	})
	return nil
}
