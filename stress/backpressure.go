package main

// Back-pressure phases: hovers at a steady rate on
// large sessions, and a mixed request flood, against the real binary (-bin)
// so that the server's own RSS is measured; without -bin the server runs in
// this process and the RSS reported includes the client.

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

var (
	bpSessions   = flag.Int("bp-sessions", 3, "hover/mix: number of large sessions hovered and prepared")
	bpSize       = flag.String("bp-size", "6MB", "hover/mix: plaintext size of each large session")
	bpTurns      = flag.Int("bp-turns", 2500, "hover/mix: turns of each large session (a turn is a user and an assistant message)")
	hoverRate    = flag.Int("hover-rate", 20, "hover: hover requests per second")
	hoverFor     = flag.Duration("hover-duration", 60*time.Second, "hover: how long hovers are sent")
	maxHoverP99  = flag.Duration("max-hover-p99", 0, "hover: fail when the hover p99 exceeds this (0: report only)")
	maxRSS       = flag.String("max-rss", "", "hover/mix: fail when the server's peak RSS exceeds this size (empty: report only)")
	mixRate      = flag.Int("mix-rate", 200, "mix: requests per second (80% completion, 10% hover, 5% resolve, 5% prepare)")
	mixFor       = flag.Duration("mix-duration", 60*time.Second, "mix: how long the mix is sent")
	maxMixCompl  = flag.Duration("max-mix-completion-p99", 0, "mix: fail when the completion p99 exceeds this (0: report only)")
	mixKinds     = flag.String("mix-kinds", "completion,hover,resolve,prepare", "mix: the request kinds sent (a kind left out is replaced by completion; \"completion\" alone gives the baseline)")
	steadyAfter  = flag.Duration("steady-after", 5*time.Second, "hover/mix: also report percentiles of the requests sent after this (the first reads of each session are cold)")
	bpStoreCache = struct {
		once sync.Once
		root string
		ids  []string
		err  error
	}{}
)

// bpStore generates (once) the large sessions plus 200 small ones.
func bpStore(dir string) (string, []string, error) {
	c := &bpStoreCache
	c.once.Do(func() {
		c.root = dir
		start := time.Now()
		infos, err := workload.Generate(dir, workload.Options{Sessions: *bpSessions, CWDs: 1, Size: parseSize(*bpSize), Turns: *bpTurns,
			Compression: workload.Zstd, Multibyte: 0.2, Seed: 16}, nil)
		if err != nil {
			c.err = err
			return
		}
		for _, in := range infos {
			c.ids = append(c.ids, in.ID)
		}
		if _, err := workload.Generate(dir, workload.Options{Sessions: 200, CWDs: 1, Turns: 2,
			Compression: workload.Zstd, Seed: 17}, nil); err != nil {
			c.err = err
			return
		}
		fmt.Fprintf(os.Stderr, "stress: generated %d x %s sessions (%d turns) + 200 small ones in %v\n", *bpSessions, *bpSize, *bpTurns, time.Since(start).Round(time.Millisecond))
	})
	return c.root, c.ids, c.err
}

// bpServer is the server under test: the binary as a child process, or in
// process.
type bpServer struct {
	*client
	cmd *exec.Cmd
	in  *inProcess
}

func startBPServer(root string) (*bpServer, error) {
	if *bin == "" {
		p := startInProcess(serverOptions(root))
		return &bpServer{client: p.client, in: p}, nil
	}
	cmd := exec.Command(*bin, "serve", "--sessions", root)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &bpServer{client: newClient(stdout, stdin), cmd: cmd}, nil
}

// rss returns the server's current and peak resident set size (bytes).
func (s *bpServer) rss() (cur, peak int64) {
	path := "/proc/self/status"
	if s.cmd != nil {
		path = "/proc/" + strconv.Itoa(s.cmd.Process.Pid) + "/status"
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return -1, -1
	}
	field := func(name string) int64 {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, name+":"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				return kb << 10
			}
		}
		return -1
	}
	return field("VmRSS"), field("VmHWM")
}

// stop shuts the server down and checks it exits 0.
func (s *bpServer) stop(phase string) {
	if err := s.callTimeout(30*time.Second, "shutdown", nil, nil); err != nil {
		failf("%s: shutdown: %v", phase, err)
	}
	s.notify("exit", nil)
	if s.in != nil {
		if code, err := s.in.disconnect(10 * time.Second); err != nil || code != 0 {
			failf("%s: exit code %d, %v", phase, code, err)
		}
		return
	}
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			failf("%s: server exit: %v", phase, err)
		}
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-done
		failf("%s: server still running 10s after exit", phase)
	}
}

// bpDoc is a document mentioning every large session, and the byte offset
// of each mention's label.
func bpDoc(ids []string) (string, []int) {
	text := "compare"
	var offs []int
	for i, id := range ids {
		label := fmt.Sprintf("s%d", i)
		text += " "
		offs = append(offs, len(text)+2)
		text += reference.FormatMention(id, &label)
	}
	return text + "\n@", offs
}

// timed is one request sent at a fixed time, and what came back.
type timed struct {
	method string
	at     time.Duration // when it was sent, from the start of the flood
	lat    time.Duration
	err    *rpcError
	closed bool
}

// flood sends next(i) at rate for dur and waits for every answer (up to
// drain). It returns the results and the server's peak RSS seen by a
// sampler during the run.
func flood(s *bpServer, rate int, dur, drain time.Duration, next func(i int) (string, any)) ([]timed, int64, error) {
	var mu sync.Mutex
	var out []timed
	var wg sync.WaitGroup
	stopSampling, sampled := make(chan struct{}), make(chan struct{})
	var peak int64
	go func() {
		defer close(sampled)
		for {
			if cur, _ := s.rss(); cur > peak {
				peak = cur
			}
			select {
			case <-stopSampling:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	interval := time.Second / time.Duration(rate)
	begin := time.Now()
	for i := 0; ; i++ {
		due := begin.Add(time.Duration(i) * interval)
		if due.Sub(begin) >= dur {
			break
		}
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		method, params := next(i)
		t0 := time.Now()
		_, ch, err := s.start(method, params)
		if err != nil {
			close(stopSampling)
			<-sampled
			return nil, 0, fmt.Errorf("sending %s: %w", method, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, ok := <-ch
			t := timed{method: method, at: t0.Sub(begin), lat: time.Since(t0), err: r.Err, closed: !ok}
			mu.Lock()
			out = append(out, t)
			mu.Unlock()
		}()
	}
	waited := make(chan struct{})
	go func() { wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(drain):
		close(stopSampling)
		<-sampled
		return nil, 0, fmt.Errorf("requests unanswered %v after the flood", drain)
	}
	close(stopSampling)
	<-sampled
	_, hwm := s.rss()
	return out, max(peak, hwm), nil
}

// summarize returns per-method counts and latency percentiles, and the
// first unexpected error.
// latencies returns the latencies of the requests of res that answered
// without error (only those of method, unless it is "").
func latencies(res []timed, method string) []time.Duration {
	var lat []time.Duration
	for _, r := range res {
		if (method == "" || r.method == method) && r.err == nil && !r.closed {
			lat = append(lat, r.lat)
		}
	}
	return lat
}

func summarize(res []timed) (map[string]any, string) {
	by := map[string][]time.Duration{}
	errs := map[string]int{}
	first := ""
	for _, r := range res {
		switch {
		case r.closed:
			errs[r.method]++
			if first == "" {
				first = r.method + ": connection closed"
			}
		case r.err != nil:
			errs[r.method]++
			if first == "" {
				first = r.method + ": " + r.err.Error()
			}
		default:
			by[r.method] = append(by[r.method], r.lat)
		}
	}
	steady := map[string][]time.Duration{}
	for _, r := range res {
		if !r.closed && r.err == nil && r.at >= *steadyAfter {
			steady[r.method] = append(steady[r.method], r.lat)
		}
	}
	out := map[string]any{}
	for m, lat := range by {
		short := m[strings.LastIndexAny(m, "/")+1:]
		out[short+"N"] = len(lat)
		out[short+"P50Ms"] = ms(percentile(lat, 0.5))
		out[short+"P99Ms"] = ms(percentile(lat, 0.99))
		out[short+"MaxMs"] = ms(percentile(lat, 1))
		if st := steady[m]; len(st) > 0 {
			out[short+"SteadyP99Ms"] = ms(percentile(st, 0.99))
		}
	}
	for m, n := range errs {
		out[m[strings.LastIndexAny(m, "/")+1:]+"Errors"] = n
	}
	return out, first
}

func checkRSS(phase string, peak int64) {
	if *maxRSS != "" && peak > parseSize(*maxRSS) {
		failf("%s: server peak RSS %d MB exceeds %s", phase, peak>>20, *maxRSS)
	}
}

// bpSession prepares a hover or mix phase: the large-session store (made
// once, next to dir), a server over it, initialized, with the document
// citing every large session open at uri, and its index complete; with
// hash, the store's tree hash taken before the server started (the phase
// checks that it did not change).
func bpSession(dir, uri string, hash bool) (root string, ids []string, s *bpServer, text string, offs []int, before map[string]string, err error) {
	root, ids, err = bpStore(filepath.Join(filepath.Dir(dir), "bp-sources"))
	if err != nil {
		return
	}
	if hash {
		if before, err = hashTree(root); err != nil {
			return
		}
	}
	if s, err = startBPServer(root); err != nil {
		return
	}
	if err = s.initialize(map[string]any{"sessionsDir": root}); err != nil {
		return
	}
	text, offs = bpDoc(ids)
	if err = s.open(uri, text); err != nil {
		return
	}
	// The index is complete once dsh/candidates answers.
	err = s.callTimeout(5*time.Minute, "dsh/candidates", map[string]any{"limit": 1}, nil)
	return
}

// runHover: -hover-rate hovers per second for -hover-duration, round robin
// over mentions of the large sessions. Every hover must answer; p99 and the
// server's RSS are reported (and checked with -max-hover-p99, -max-rss).
func runHover(dir string) error {
	uri := "file:///hover.dsh"
	root, ids, s, _, offs, before, err := bpSession(dir, uri, true)
	if err != nil {
		return err
	}
	t0 := time.Now()
	res, peak, err := flood(s, *hoverRate, *hoverFor, 2*time.Minute, func(i int) (string, any) {
		return "textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri},
			"position": map[string]any{"line": 0, "character": offs[i%len(offs)]}} // utf-8 positions
	})
	if err != nil {
		s.stop("hover")
		return err
	}
	elapsed := time.Since(t0)
	s.stop("hover")
	sum, first := summarize(res)
	if first != "" {
		failf("hover: %s", first)
	}
	p99 := percentile(latencies(res, ""), 0.99)
	if *maxHoverP99 > 0 && p99 > *maxHoverP99 {
		failf("hover: p99 %v exceeds %v", p99, *maxHoverP99)
	}
	checkRSS("hover", peak)
	after, err := hashTree(root)
	if err != nil {
		return err
	}
	if d := sameTree(before, after); len(d) > 0 {
		failf("hover: store files changed: %v", d)
	}
	sum["ratePerS"], sum["durationS"], sum["elapsedS"] = *hoverRate, hoverFor.Seconds(), elapsed.Seconds()
	sum["sessions"], sum["sessionSize"], sum["turns"] = len(ids), *bpSize, *bpTurns
	sum["serverPeakRSSMB"], sum["outOfProcess"], sum["storeUnchanged"] = peak>>20, *bin != "", len(sameTree(before, after)) == 0
	report("hover", sum)
	return nil
}

// runMix: -mix-rate requests per second for -mix-duration: 80% completion
// (alternating queries), 10% hover, 5% completionItem/resolve, 5% prepare
// of every large session. Completion p99 is reported (checked with
// -max-mix-completion-p99); every request must answer without error.
func runMix(dir string) error {
	uri := "file:///mix.dsh"
	_, ids, s, text, offs, _, err := bpSession(dir, uri, false)
	if err != nil {
		return err
	}
	prepText := text[:strings.LastIndexByte(text, '\n')]
	complAt := map[string]any{"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": 1, "character": 1}}
	kinds := map[string]bool{}
	for _, k := range strings.Split(*mixKinds, ",") {
		kinds[strings.TrimSpace(k)] = true
	}
	res, peak, err := flood(s, *mixRate, *mixFor, 5*time.Minute, func(i int) (string, any) {
		switch i % 20 {
		case 3, 13:
			if !kinds["hover"] {
				break
			}
			return "textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri},
				"position": map[string]any{"line": 0, "character": offs[i%len(offs)]}}
		case 7:
			if !kinds["resolve"] {
				break
			}
			id := ids[i%len(ids)]
			return "completionItem/resolve", map[string]any{"label": id, "data": map[string]any{"sessionId": id, "label": id, "createdAt": 0}}
		case 17:
			if !kinds["prepare"] {
				break
			}
			return "dsh/prepare", map[string]any{"text": prepText}
		}
		return "textDocument/completion", complAt
	})
	if err != nil {
		s.stop("mix")
		return err
	}
	s.stop("mix")
	sum, first := summarize(res)
	if first != "" {
		failf("mix: %s", first)
	}
	lat := latencies(res, "textDocument/completion")
	if p99 := percentile(lat, 0.99); *maxMixCompl > 0 && p99 > *maxMixCompl {
		failf("mix: completion p99 %v exceeds %v", p99, *maxMixCompl)
	}
	checkRSS("mix", peak)
	sum["ratePerS"], sum["durationS"], sum["sessions"], sum["sessionSize"], sum["kinds"] = *mixRate, mixFor.Seconds(), len(ids), *bpSize, *mixKinds
	sum["serverPeakRSSMB"], sum["outOfProcess"] = peak>>20, *bin != ""
	report("mix", sum)
	return nil
}
