// Command run is the dsh-lsp benchmark driver. It generates stores with
// bench/workload (kept under -work between runs), drives the real dsh-lsp
// binary over stdio and reports:
//
//   - completion on stores of 1k / 10k sessions: time from process start to
//     the first completion answer and to the first complete one (no cache,
//     and after a restart with the cache), the latency of the first request,
//     warm p50/p99 over many requests, $/progress count, peak RSS;
//   - prepare with 1 and 3 sources of 4 MB / 20 MB / 200 MB / 2 GB: time per
//     dsh/prepare, peak RSS of the server, and the floor (read + JSON-decode
//     of the same bytes with a plain line loop).
//
// Latencies are request round trips over the stdio pipe, measured in the
// driver: server-side time plus about 0.1 ms of framing and pipe transfer.
//
//	go run ./bench/run -sessions 1000,10000 -sizes 4MB,20MB,200MB,2GB
//	go run ./bench/run -firstpass STORE -nocache 3 -bin BIN   # the server's first pass, CPU against the floor's
//
// Large stores (>= 1 GB) are deleted after use unless -keep.
package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
	"github.com/dsh-lsp/dsh-lsp/internal/cputime"
	"github.com/dsh-lsp/dsh-lsp/internal/diskfree"
)

type config struct {
	bin, work   string
	compression workload.Compression
	warm        int
	restarts    int
	nocache     int
	prepRuns    int
	keep        bool
	// latencies, when set, receives every restart's new-query latencies.
	latencies   string
	sources3Big bool
	// vs, with -firstpass, is a second binary started beside bin in each
	// round (between the same two floors), for an A/B comparison.
	vs string
}

func main() {
	// The harness's own collector would add its pauses to the latencies
	// it measures (a 4 MB heap collected every 80 ms during a run of
	// queries, its mark phases on the goroutine reading the answers):
	// give it room. The server keeps its own setting; GOGC in the
	// environment still reaches it.
	debug.SetGCPercent(400)
	var (
		cfg      config
		sessions = flag.String("sessions", "1000,10000", "completion store sizes (sessions), comma-separated; empty to skip")
		sizes    = flag.String("sizes", "4MB,20MB,200MB,2GB", "prepare source sizes, comma-separated; empty to skip")
		comp     = flag.String("compression", "zstd", "store encoding: none or zstd")
		out      = flag.String("out", "", "results JSON file (default WORK/results-<compression>.json)")
		restart  = flag.String("restart", "", "only measure -restarts restarts of the server on this existing store, its XDG cache home -restart-xdg (primed first when it holds no cache)")
		xdg      = flag.String("restart-xdg", "", "the XDG_CACHE_HOME of -restart")
		idle     = flag.Duration("idle", 0, "with -restart: then leave the server idle this long and report its CPU use meanwhile (polls, scans)")
		first    = flag.String("firstpass", "", "only measure -nocache starts of the server on this existing store without a cache, each between two runs of the floor over the same files: wall and CPU to the first complete answer against their mean, and the median CPU ratio")
	)
	flag.StringVar(&cfg.bin, "bin", "", "dsh-lsp binary (default: go build ./cmd/dsh-lsp into WORK)")
	flag.StringVar(&cfg.work, "work", "bench/out", "work directory for stores, caches, logs")
	flag.IntVar(&cfg.warm, "warm", 1000, "warm completion requests per store")
	flag.IntVar(&cfg.restarts, "restarts", 5, "restarts measured with the cache")
	flag.IntVar(&cfg.nocache, "nocache", 2, "starts measured without a cache")
	flag.IntVar(&cfg.prepRuns, "prepare-runs", 3, "prepare requests per case (the first is also reported alone)")
	flag.BoolVar(&cfg.keep, "keep", false, "keep stores of 1 GB and more")
	flag.StringVar(&cfg.latencies, "latencies", "", "with -restart: write each new query's latency to this CSV file (restart, query, ms since spawn, latency ms)")
	flag.StringVar(&cfg.vs, "vs", "", "with -firstpass: a second binary started beside -bin in each round between the same floors (order alternating), for an A/B comparison")
	flag.BoolVar(&cfg.sources3Big, "three-big", false, "also run 3 sources at sizes >= 1 GB (needs 3x disk)")
	flag.Parse()
	cfg.compression = workload.Compression(*comp)
	must(os.MkdirAll(cfg.work, 0o755))
	// The server gets XDG_CACHE_HOME under WORK: it must be absolute.
	abs, err := filepath.Abs(cfg.work)
	must(err)
	cfg.work = abs
	if cfg.bin == "" {
		cfg.bin = filepath.Join(cfg.work, "dsh-lsp")
		build := exec.Command("go", "build", "-o", cfg.bin, "./cmd/dsh-lsp")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		must(build.Run())
	}
	if *restart != "" {
		must(runRestarts(cfg, *restart, *xdg, *idle))
		return
	}
	if *first != "" {
		must(runFirstPasses(cfg, *first))
		return
	}
	if *out == "" {
		*out = filepath.Join(cfg.work, "results-"+string(cfg.compression)+".json")
	}
	res := results{Machine: machine(), Compression: string(cfg.compression), Date: time.Now().UTC().Format(time.RFC3339)}
	for _, f := range splitList(*sessions) {
		n, err := strconv.Atoi(f)
		must(err)
		r, err := runCompletion(cfg, n)
		if err != nil {
			fmt.Fprintln(os.Stderr, "completion", n, ":", err)
			r.Error = err.Error()
		}
		res.Completion = append(res.Completion, r)
		save(*out, res)
	}
	for _, f := range splitList(*sizes) {
		size, err := workload.ParseSize(f)
		must(err)
		rs, err := runPrepare(cfg, f, size)
		if err != nil {
			fmt.Fprintln(os.Stderr, "prepare", f, ":", err)
		}
		res.Prepare = append(res.Prepare, rs...)
		save(*out, res)
	}
	printTable(os.Stdout, res)
}

type results struct {
	Machine     map[string]string `json:"machine"`
	Compression string            `json:"compression"`
	Date        string            `json:"date"`
	Completion  []completionResult
	Prepare     []prepareResult
}

type startResult struct {
	FirstAnswerMs   float64 `json:"firstAnswerMs"`   // spawn -> first completion answer
	FirstCompleteMs float64 `json:"firstCompleteMs"` // spawn -> first answer with isIncomplete false
	FirstLatencyMs  float64 `json:"firstLatencyMs"`  // round trip of the first completion request
	FirstIncomplete bool    `json:"firstIncomplete"`
	// FirstCompleteCPUMs is the server's CPU (user + system) by the
	// first complete answer (read within 20 ms of it).
	FirstCompleteCPUMs float64 `json:"firstCompleteCpuMs"`
	Progress           int     `json:"progress"`
	PeakRSS            int64   `json:"peakRSS"`
}

type completionResult struct {
	Sessions  int           `json:"sessions"`
	FileBytes int64         `json:"fileBytes"`
	NoCache   []startResult `json:"noCache"`
	// FloorValidMs is the json.Valid floor over the store's files
	// (workload.FloorValid, one goroutine), measured after each no-cache start.
	FloorValidMs []float64     `json:"floorValidMs"`
	Cache        []startResult `json:"cache"`
	// ContentBuildMs is how long the primed server took, after its first
	// pass, to build its content index (dsh/search waits for it).
	ContentBuildMs float64 `json:"contentBuildMs"`
	WarmP50Ms      float64 `json:"warmP50Ms"`
	WarmP99Ms      float64 `json:"warmP99Ms"`
	WarmMaxMs      float64 `json:"warmMaxMs"`
	// Unique* are warm requests whose query was never asked before.
	UniqueP50Ms float64 `json:"uniqueP50Ms"`
	UniqueP99Ms float64 `json:"uniqueP99Ms"`
	UniqueMaxMs float64 `json:"uniqueMaxMs"`
	PerQuery    map[string][2]float64
	Items       map[string]int
	PeakRSS     int64  `json:"peakRSS"`
	Error       string `json:"error,omitempty"`
}

type prepareResult struct {
	Size       string  `json:"size"`
	Sources    int     `json:"sources"`
	PlainBytes int64   `json:"plainBytes"`
	FileBytes  int64   `json:"fileBytes"`
	ColdMs     float64 `json:"coldMs"` // fresh server, no cache: prepare right after initialize
	ColdRSS    int64   `json:"coldRSS"`
	FirstMs    float64 `json:"firstMs"`
	BestMs     float64 `json:"bestMs"`
	FloorMs    float64 `json:"floorMs"`
	FloorRead  float64 `json:"floorReadMs"`
	PeakRSS    int64   `json:"peakRSS"`
	Error      string  `json:"error,omitempty"`
}

// store generates (or reuses) a store and returns its root and manifest.
func store(cfg config, name string, opts workload.Options) (string, []workload.Info, error) {
	root := filepath.Join(cfg.work, "stores", name)
	stamp := root + ".manifest.json"
	if data, err := os.ReadFile(stamp); err == nil {
		var infos []workload.Info
		if json.Unmarshal(data, &infos) == nil {
			return root, infos, nil
		}
	}
	// A store written earlier by `go run ./bench/gen` with the same
	// options has the same paths: rebuild its manifest from the specs.
	if infos, ok := manifestFromSpecs(root, opts); ok {
		data, _ := json.Marshal(infos)
		return root, infos, os.WriteFile(stamp, data, 0o644)
	}
	os.RemoveAll(root)
	fmt.Fprintf(os.Stderr, "run: generating %s ...\n", name)
	start := time.Now()
	infos, err := workload.Generate(root, opts, nil)
	if err != nil {
		return "", nil, err
	}
	fmt.Fprintf(os.Stderr, "run: generated %s in %.1fs\n", name, time.Since(start).Seconds())
	data, _ := json.Marshal(infos)
	return root, infos, os.WriteFile(stamp, data, 0o644)
}

func manifestFromSpecs(root string, opts workload.Options) ([]workload.Info, bool) {
	specs := workload.Specs(opts)
	infos := make([]workload.Info, len(specs))
	for i, sp := range specs {
		p := workload.PathOf(root, sp, opts.Compression)
		fi, err := os.Stat(p)
		if err != nil {
			return nil, false
		}
		infos[i] = workload.Info{ID: sp.ID, CWD: sp.CWD, CreatedAt: sp.CreatedAt, Path: p, File: fi.Size(), Plain: -1}
	}
	return infos, len(infos) > 0
}

func removeStore(cfg config, name string) {
	root := filepath.Join(cfg.work, "stores", name)
	os.RemoveAll(root)
	os.Remove(root + ".manifest.json")
}

var queries = []string{"", "proj", "project-007", "界", "migration", "zzzz-nomatch"}

// queryDoc returns the document text with one "@query" per line.
func queryDoc(extra []string) (string, []string) {
	qs := append(append([]string(nil), queries...), extra...)
	lines := make([]string, len(qs))
	for i, q := range qs {
		lines[i] = "@" + q
	}
	return strings.Join(lines, "\n") + "\n", qs
}

func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

// startAndComplete starts a server, opens the query document and polls
// completion on the first query until an answer is complete.
func startAndComplete(cfg config, root, cacheDir, logPath, text string) (*server, startResult, error) {
	var r startResult
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	s, err := startServer(cfg.bin, []string{"--sessions", root, "--log-level", "warn"}, cacheDir, logPath)
	if err != nil {
		return nil, r, err
	}
	if err := s.initialize(ctx, root, "/home/alice/work/project-000"); err != nil {
		s.stop()
		return nil, r, err
	}
	uri := "file:///bench/query.md"
	if err := s.open(uri, text); err != nil {
		s.stop()
		return nil, r, err
	}
	// Query "proj" (line 1) matches every session: it needs every title.
	t0 := time.Now()
	_, incomplete, err := s.completion(ctx, uri, 1, utf16Len("@proj"))
	if err != nil {
		s.stop()
		return nil, r, err
	}
	r.FirstLatencyMs = ms(time.Since(t0))
	r.FirstAnswerMs = ms(time.Since(s.started))
	r.FirstIncomplete = incomplete
	// Indexing is complete when the server's $/progress ends; when it
	// never began (a valid cache, nothing to parse) the first answer was
	// already served from the complete index.
	for {
		s.mu.Lock()
		begin, end := s.progressBegin, s.progressEnd
		s.mu.Unlock()
		if !end.IsZero() {
			r.FirstCompleteMs = ms(end.Sub(s.started))
			r.FirstCompleteCPUMs = ms(s.cpuTime()) // within one poll of the end
			break
		}
		if begin.IsZero() && time.Since(t0) > 500*time.Millisecond {
			r.FirstCompleteMs = r.FirstAnswerMs
			break
		}
		if ctx.Err() != nil {
			s.stop()
			return nil, r, ctx.Err()
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.mu.Lock()
	r.Progress = s.progress
	s.mu.Unlock()
	r.PeakRSS = s.peakRSS()
	return s, r, nil
}

func runCompletion(cfg config, n int) (completionResult, error) {
	res := completionResult{Sessions: n, PerQuery: map[string][2]float64{}, Items: map[string]int{}}
	name := fmt.Sprintf("%s-s%d", cfg.compression, n)
	root, infos, err := store(cfg, name, workload.Options{
		Sessions: n, CWDs: max(n/50, 2), Compression: cfg.compression, Multibyte: 0.2,
		Compactions: 1, NoCWD: 0.05, Seed: int64(n),
	})
	if err != nil {
		return res, err
	}
	for _, in := range infos {
		res.FileBytes += in.File
	}
	// Warm queries: the fixed set (repeated, so the server's short-lived
	// result cache answers most of them) and unique 3-hex-digit queries
	// (every request misses that cache, as each keystroke of real typing
	// does).
	unique := uniqueQueries(cfg.warm, int64(n))
	text, qs := queryDoc(append([]string{infos[len(infos)/2].ID[:8]}, unique...))
	fixed := len(queries) + 1
	logs := filepath.Join(cfg.work, "logs")
	os.MkdirAll(logs, 0o755)
	// No cache: a fresh cache directory per start, each followed by the
	// floor (startWithoutCache).
	var paths []string
	for _, in := range infos {
		paths = append(paths, in.Path)
	}
	for i := 0; i < cfg.nocache; i++ {
		r, floor, _, err := startWithoutCache(cfg, root, paths, filepath.Join(logs, name+"-nocache.log"), text)
		if err != nil {
			return res, err
		}
		res.NoCache = append(res.NoCache, r)
		res.FloorValidMs = append(res.FloorValidMs, ms(floor.Elapsed))
		fmt.Fprintf(os.Stderr, "run: %s no cache: complete %.0f ms after spawn, floor (json.Valid, one goroutine) %.0f ms: %.2fx\n",
			name, r.FirstCompleteMs, ms(floor.Elapsed), r.FirstCompleteMs/ms(floor.Elapsed))
	}
	// With the cache: prime it once, then measure restarts.
	cache := filepath.Join(cfg.work, "cache-"+name)
	os.RemoveAll(cache)
	os.MkdirAll(cache, 0o755)
	s, _, err := startAndComplete(cfg, root, cache, filepath.Join(logs, name+"-prime.log"), text)
	if err != nil {
		return res, err
	}
	// The content index (content search is on by default) is built after
	// the store index's first pass: stopping before it is done would leave
	// the restarts below building it while they are measured.
	t0 := time.Now()
	if err := s.contentReady(context.Background()); err != nil {
		s.stop()
		return res, fmt.Errorf("content index build: %w", err)
	}
	res.ContentBuildMs = ms(time.Since(t0))
	s.stop()
	for i := 0; i < cfg.restarts; i++ {
		s, r, err := startAndComplete(cfg, root, cache, filepath.Join(logs, name+"-cache.log"), text)
		if err != nil {
			return res, err
		}
		res.Cache = append(res.Cache, r)
		if i < cfg.restarts-1 {
			s.stop()
			continue
		}
		// Warm: the last process answers many requests, once nothing is
		// left to index (its content index syncs from the cache).
		ctx := context.Background()
		if err := s.contentReady(ctx); err != nil {
			s.stop()
			return res, fmt.Errorf("content index sync: %w", err)
		}
		uri := "file:///bench/query.md"
		var all, uniq []time.Duration
		per := map[string][]time.Duration{}
		for k := 0; k < cfg.warm; k++ {
			line := k % fixed
			t0 := time.Now()
			items, _, err := s.completion(ctx, uri, line, utf16Len("@"+qs[line]))
			d := time.Since(t0)
			if err != nil {
				s.stop()
				return res, err
			}
			all = append(all, d)
			per[qs[line]] = append(per[qs[line]], d)
			res.Items[qs[line]] = items
		}
		for line := fixed; line < len(qs); line++ {
			t0 := time.Now()
			if _, _, err := s.completion(ctx, uri, line, utf16Len("@"+qs[line])); err != nil {
				s.stop()
				return res, err
			}
			uniq = append(uniq, time.Since(t0))
		}
		res.WarmP50Ms, res.WarmP99Ms, res.WarmMaxMs = pct(all, 50), pct(all, 99), pct(all, 100)
		res.UniqueP50Ms, res.UniqueP99Ms, res.UniqueMaxMs = pct(uniq, 50), pct(uniq, 99), pct(uniq, 100)
		for q, ds := range per {
			res.PerQuery[q] = [2]float64{pct(ds, 50), pct(ds, 99)}
		}
		res.PeakRSS = s.peakRSS()
		s.stop()
	}
	os.RemoveAll(cache)
	return res, nil
}

// startWithoutCache starts the server on root with an empty cache
// directory until its first complete answer, stops it, then runs the
// one-goroutine json.Valid floor over paths (the first pass's target):
// the two share the machine's load of that moment. floorCPU is the
// floor's CPU time in ms.
func startWithoutCache(cfg config, root string, paths []string, logPath, text string) (r startResult, floor workload.FloorResult, floorCPU float64, err error) {
	if r, err = startWithoutFloor(cfg, root, logPath, text); err != nil {
		return r, floor, 0, err
	}
	floor, floorCPU, err = timedFloor(paths)
	return r, floor, floorCPU, err
}

// timedFloor runs the one-goroutine json.Valid floor over paths and
// returns it with its CPU time in ms.
func timedFloor(paths []string) (workload.FloorResult, float64, error) {
	c0 := cputime.Process()
	floor, err := workload.Floor(paths, workload.FloorValid)
	return floor, ms(cputime.Process() - c0), err
}

// runFirstPasses starts the server cfg.nocache times on root without a
// cache (a fresh XDG_CACHE_HOME each time), each between two runs of the
// one-goroutine json.Valid floor over the same files, and prints the wall
// and CPU time of each to the first complete answer against the mean of
// its two floors, then the median CPU ratio. The host's speed drifts from
// minute to minute: a floor on one side only puts that drift in the ratio.
func runFirstPasses(cfg config, root string) error {
	paths := workload.Transcripts(root)
	if len(paths) == 0 {
		return fmt.Errorf("%s: no transcripts", root)
	}
	text, _ := queryDoc(nil)
	logs := filepath.Join(cfg.work, "logs")
	os.MkdirAll(logs, 0o755)
	bins := []string{cfg.bin}
	if cfg.vs != "" {
		bins = append(bins, cfg.vs)
	}
	ratios := make([][]float64, len(bins))
	for i := 0; i < cfg.nocache; i++ {
		before, beforeCPU, err := timedFloor(paths)
		if err != nil {
			return err
		}
		results := make([]startResult, len(bins))
		for k := range bins {
			b := (k + i) % len(bins) // alternate which binary goes first
			c := cfg
			c.bin = bins[b]
			results[b], err = startWithoutFloor(c, root, filepath.Join(logs, "firstpass.log"), text)
			if err != nil {
				return err
			}
		}
		after, afterCPU, err := timedFloor(paths)
		if err != nil {
			return err
		}
		floorWall, floorCPU := (ms(before.Elapsed)+ms(after.Elapsed))/2, (beforeCPU+afterCPU)/2
		for b, r := range results {
			ratios[b] = append(ratios[b], r.FirstCompleteCPUMs/floorCPU)
			fmt.Printf("first pass %d (%s): complete %.0f ms, CPU %.0f ms after spawn, peak RSS %s; floor before %.0f ms CPU, after %.0f ms CPU: wall %.2fx, CPU %.2fx\n",
				i, filepath.Base(bins[b]), r.FirstCompleteMs, r.FirstCompleteCPUMs, mb(r.PeakRSS), beforeCPU, afterCPU,
				r.FirstCompleteMs/floorWall, r.FirstCompleteCPUMs/floorCPU)
		}
	}
	for b, rs := range ratios {
		if len(rs) == 0 {
			continue
		}
		sort.Float64s(rs)
		fmt.Printf("first passes (%s): median CPU %.2fx the floors' (%d runs, %.2fx to %.2fx)\n", filepath.Base(bins[b]), rs[len(rs)/2], len(rs), rs[0], rs[len(rs)-1])
	}
	return nil
}

// startWithoutFloor starts the server on root with an empty cache
// directory until its first complete answer and stops it.
func startWithoutFloor(cfg config, root, logPath, text string) (startResult, error) {
	cache := filepath.Join(cfg.work, "cache-empty")
	os.RemoveAll(cache)
	os.MkdirAll(cache, 0o755)
	defer os.RemoveAll(cache)
	s, r, err := startAndComplete(cfg, root, cache, logPath, text)
	if err != nil {
		return r, err
	}
	s.stop()
	return r, nil
}

// runRestarts starts the server on root with the XDG cache home xdg
// cfg.restarts times and reports, per start: the first completion answer
// after spawn, the peak RSS then, the peak RSS after the content index is
// ready and cfg.warm new queries were answered (what serving costs), and,
// when idle is set, the CPU the server then uses idle for that long.
func runRestarts(cfg config, root, xdg string, idle time.Duration) error {
	text, qs := queryDoc(uniqueQueries(cfg.warm, 1))
	logPath := filepath.Join(cfg.work, "restart.log")
	ctx := context.Background()
	var csv *os.File
	if cfg.latencies != "" {
		f, err := os.Create(cfg.latencies)
		if err != nil {
			return err
		}
		defer f.Close()
		fmt.Fprintln(f, "restart,query,since_spawn_ms,latency_ms")
		csv = f
	}
	for i := 0; i < cfg.restarts; i++ {
		s, r, err := startAndComplete(cfg, root, xdg, logPath, text)
		if err != nil {
			return err
		}
		if err := s.contentReady(ctx); err != nil && !strings.Contains(err.Error(), "content search is off") {
			s.stop()
			return err
		}
		var uniq []time.Duration
		for line := len(queries); line < len(qs); line++ {
			t0 := time.Now()
			if _, _, err := s.completion(ctx, "file:///bench/query.md", line, utf16Len("@"+qs[line])); err != nil {
				s.stop()
				return err
			}
			uniq = append(uniq, time.Since(t0))
			if csv != nil {
				fmt.Fprintf(csv, "%d,%s,%.1f,%.3f\n", i, qs[line], ms(t0.Sub(s.started)), ms(uniq[len(uniq)-1]))
			}
		}
		fmt.Printf("restart %d: first answer %.0f ms after spawn (incomplete %v), peak RSS %s then, %s after content ready and %d new queries (p50 %.2f ms, p99 %.2f ms)\n",
			i, r.FirstAnswerMs, r.FirstIncomplete, mb(r.PeakRSS), mb(s.peakRSS()), len(uniq), pct(uniq, 50), pct(uniq, 99))
		if idle > 0 {
			c0, t0 := s.cpuTime(), time.Now()
			time.Sleep(idle)
			fmt.Printf("restart %d: idle %v: CPU %.1f%% of one core, peak RSS %s\n", i, idle.Round(time.Second),
				100*float64(s.cpuTime()-c0)/float64(time.Since(t0)), mb(s.peakRSS()))
		}
		took, killed := s.stop()
		fmt.Printf("restart %d: exited %.0f ms after shutdown (killed: %v)\n", i, ms(took), killed)
	}
	return nil
}

// uniqueQueries returns n distinct 3-hex-digit queries (at most 4,096),
// drawn from seed.
func uniqueQueries(n int, seed int64) []string {
	r := rand.New(rand.NewSource(seed))
	var unique []string
	seen := map[string]bool{}
	for len(unique) < n && len(seen) < 4096 {
		q := fmt.Sprintf("%03x", r.Intn(4096))
		if !seen[q] {
			seen[q] = true
			unique = append(unique, q)
		}
	}
	return unique
}

func runPrepare(cfg config, label string, size int64) ([]prepareResult, error) {
	big := size >= 1<<30
	nsrc := 3
	if big && !cfg.sources3Big {
		nsrc = 1
	}
	name := fmt.Sprintf("%s-src%s-x%d", cfg.compression, strings.ToLower(label), nsrc)
	if big {
		if err := checkDisk(cfg.work, size*int64(nsrc)); err != nil {
			return nil, err
		}
	}
	root, infos, err := store(cfg, name, workload.Options{
		Sessions: nsrc, CWDs: 1, Size: size, Compression: cfg.compression, Multibyte: 0.2,
		// A compaction every ~40 turns (~1.3 MB of log), as a context
		// window forces in long sessions.
		Compactions: max(2, int(size/32768/40)), Seed: size,
	})
	if err != nil {
		return nil, err
	}
	if big && !cfg.keep {
		defer removeStore(cfg, name)
	}
	var out []prepareResult
	for _, k := range []int{1, 3} {
		if k > nsrc {
			continue
		}
		r := prepareResult{Size: label, Sources: k}
		var paths []string
		var mentions []string
		for i, in := range infos[:k] {
			r.PlainBytes += in.Plain
			r.FileBytes += in.File
			paths = append(paths, in.Path)
			mentions = append(mentions, fmt.Sprintf("@[src%d](%s)", i, uri(in.ID)))
		}
		runs := cfg.prepRuns
		if big {
			runs = 1
		}
		if err := measurePrepare(cfg, root, name, strings.Join(mentions, " and ")+" please", runs, &r); err != nil {
			r.Error = err.Error()
		}
		fr := min(runs, 3)
		best, err := bestFloor(paths, workload.FloorDecode, fr)
		if err != nil {
			return out, err
		}
		r.FloorMs = ms(best)
		if best, err = bestFloor(paths, workload.FloorRead, fr); err == nil {
			r.FloorRead = ms(best)
		}
		out = append(out, r)
		fmt.Fprintf(os.Stderr, "run: prepare %s x%d: cold %.0f ms (rss %d MB), indexed first %.0f ms, best %.0f ms, floor %.0f ms, rss %d MB\n",
			label, k, r.ColdMs, r.ColdRSS>>20, r.FirstMs, r.BestMs, r.FloorMs, r.PeakRSS>>20)
	}
	return out, nil
}

func measurePrepare(cfg config, root, name, text string, runs int, r *prepareResult) error {
	cache := filepath.Join(cfg.work, "cache-"+name)
	os.RemoveAll(cache)
	os.MkdirAll(cache, 0o755)
	defer os.RemoveAll(cache)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	params := map[string]any{"text": text, "target": map[string]any{"cwd": "/bench"}}
	// Cold: a fresh server without a cache, prepare right after initialize.
	s, err := startServer(cfg.bin, []string{"--sessions", root, "--log-level", "warn"}, cache, filepath.Join(cfg.work, "logs", name+"-cold.log"))
	if err != nil {
		return err
	}
	if err := s.initialize(ctx, root, "/bench"); err != nil {
		s.stop()
		return err
	}
	t0 := time.Now()
	_, err = s.call(ctx, "dsh/prepare", params)
	r.ColdMs = ms(time.Since(t0))
	r.ColdRSS = s.peakRSS()
	s.stop()
	if err != nil {
		return err
	}
	// Warm: a server whose index is complete.
	doc, _ := queryDoc(nil)
	s, _, err = startAndComplete(cfg, root, cache, filepath.Join(cfg.work, "logs", name+".log"), doc)
	if err != nil {
		return err
	}
	defer s.stop()
	for i := 0; i < runs; i++ {
		t0 := time.Now()
		_, err := s.call(ctx, "dsh/prepare", params)
		d := ms(time.Since(t0))
		if err != nil {
			return err
		}
		if i == 0 {
			r.FirstMs, r.BestMs = d, d
		}
		r.BestMs = min(r.BestMs, d)
	}
	r.PeakRSS = s.peakRSS()
	return nil
}

func bestFloor(paths []string, mode workload.FloorMode, runs int) (time.Duration, error) {
	var best time.Duration
	for i := 0; i < max(runs, 1); i++ {
		fr, err := workload.Floor(paths, mode)
		if err != nil {
			return 0, err
		}
		if i == 0 || fr.Elapsed < best {
			best = fr.Elapsed
		}
	}
	return best, nil
}

// uri is dsh-session:<base64url(JSON.stringify(id))> for ids that need no
// JSON escaping (generated UUIDs).
func uri(id string) string {
	return "dsh-session:" + base64.RawURLEncoding.EncodeToString([]byte(`"`+id+`"`))
}

func checkDisk(dir string, need int64) error {
	free, err := diskfree.Free(dir)
	if err != nil {
		return err
	}
	if free < need+(10<<30) {
		return fmt.Errorf("not enough disk in %s: %d GB free, need %d GB + 10 GB headroom", dir, free>>30, need>>30)
	}
	return nil
}

func pct(ds []time.Duration, p int) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := (len(s)*p + 99) / 100
	if i > 0 {
		i--
	}
	return ms(s[min(i, len(s)-1)])
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func save(path string, res results) {
	data, _ := json.MarshalIndent(res, "", "  ")
	os.WriteFile(path, data, 0o644)
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "run:", err)
		os.Exit(1)
	}
}
