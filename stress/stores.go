package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
	"github.com/dsh-lsp/dsh-lsp/internal/diskfree"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/storetest"
)

// resetPeakRSS resets VmHWM (Linux clear_refs 5) so each measurement has
// its own peak.
func resetPeakRSS() {
	runtime.GC()
	os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// freeDisk returns the free bytes of the filesystem holding dir.
func freeDisk(dir string) int64 {
	n, err := diskfree.Free(dir)
	if err != nil {
		return -1
	}
	return n
}

// runStores: one huge raw session, and very many tiny sessions in one cwd
// folder, read through the same paths the server uses.
func runStores(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if size := parseSize(*bigSession); size > 0 {
		if err := bigSessionStore(filepath.Join(dir, "big"), size); err != nil {
			failf("stores: big session: %v", err)
		}
	}
	if *tinyCount > 0 {
		if err := tinySessionsStore(filepath.Join(dir, "tiny"), *tinyCount); err != nil {
			failf("stores: tiny sessions: %v", err)
		}
	}
	return nil
}

func bigSessionStore(root string, size int64) error {
	if free := freeDisk(filepath.Dir(root)); free >= 0 && free < size*2 {
		return fmt.Errorf("only %d MB free for a %d MB session", free>>20, size>>20)
	}
	t0 := time.Now()
	infos, err := workload.Generate(root, workload.Options{Sessions: 1, CWDs: 1, Size: size, Compression: workload.None, Seed: 11}, nil)
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	gen := time.Since(t0)
	id := infos[0].ID
	before, err := hashTree(root)
	if err != nil {
		return err
	}
	res := map[string]any{"sessionBytes": infos[0].File, "generateS": gen.Seconds()}

	resetPeakRSS()
	srv := startInProcess(serverOptions(root))
	defer srv.disconnect(30 * time.Second)
	if err := srv.initialize(map[string]any{"sessionsDir": root}); err != nil {
		return err
	}
	t0 = time.Now()
	var items []map[string]any
	if err := srv.call("dsh/candidates", map[string]any{}, &items); err != nil {
		return fmt.Errorf("candidates: %w", err)
	}
	res["candidatesS"], res["candidates"] = time.Since(t0).Seconds(), len(items)
	res["candidatesPeakRSSMB"] = peakRSS() >> 20

	resetPeakRSS()
	t0 = time.Now()
	var prep struct {
		References []any `json:"references"`
	}
	err = srv.call("dsh/prepare", map[string]any{"text": "see " + reference.FormatMention(id, nil)}, &prep)
	res["prepareS"], res["prepareError"] = time.Since(t0).Seconds(), fmt.Sprint(err)
	res["preparePeakRSSMB"] = peakRSS() >> 20
	if err != nil {
		failf("stores: prepare of a %d MB session: %v", infos[0].File>>20, err)
	}
	// Still serving afterwards.
	if err := srv.call("dsh/candidates", map[string]any{"query": "zzz-no-match"}, nil); err != nil {
		failf("stores: server not serving after the big prepare: %v", err)
	}
	after, err := hashTree(root)
	if err != nil {
		return err
	}
	if d := sameTree(before, after); len(d) > 0 {
		failf("stores: big session changed on disk: %v", d)
	}
	report("big-session", res)
	return nil
}

func tinySessionsStore(root string, n int) error {
	res := map[string]any{"sessions": n}
	progress := func(k string, v any) {
		res[k] = v
		fmt.Fprintf(os.Stderr, "stress: tiny-sessions %s = %v\n", k, v)
	}
	var someID string
	if *tinyRoot != "" {
		root = *tinyRoot // an existing store of n tiny sessions (kept)
		someID = workload.Specs(workload.Options{Sessions: n, CWDs: 1, Turns: 1, Seed: 12})[n/2].ID
	} else {
		t0 := time.Now()
		last := time.Now()
		infos, err := workload.Generate(root, workload.Options{Sessions: n, CWDs: 1, Turns: 1, Compression: workload.None, Seed: 12}, func(done int) {
			if time.Since(last) > 10*time.Second {
				last = time.Now()
				fmt.Fprintf(os.Stderr, "stress: %d/%d tiny sessions written\n", done, n)
			}
		})
		if err != nil {
			return err
		}
		defer os.RemoveAll(root)
		someID = infos[n/2].ID
		progress("generateS", time.Since(t0).Seconds())
	}

	// The store directly: the header-only listing.
	st, _ := storetest.OpenSynced(root, 0)
	resetPeakRSS()
	t0 := time.Now()
	headers, err := st.ListSessions(context.Background())
	if err != nil {
		return err
	}
	progress("storeListS", time.Since(t0).Seconds())
	progress("storeListPeakRSSMB", peakRSS()>>20)
	if len(headers) != n {
		failf("stores: %d of %d tiny sessions listed", len(headers), n)
	}
	headers = nil

	// Through the server: the first completion-style query (cold), again
	// (warm), and a filtered one (reads every title).
	resetPeakRSS()
	srv := startInProcess(serverOptions(root))
	defer srv.disconnect(30 * time.Second)
	if err := srv.initialize(map[string]any{"sessionsDir": root}); err != nil {
		return err
	}
	for i, q := range []string{"", "", someID[:8]} {
		t0 = time.Now()
		var items []map[string]any
		err := srv.callTimeout(*tinyTimeout, "dsh/candidates", map[string]any{"query": q}, &items)
		key := fmt.Sprintf("candidates%d%qS", i, q)
		if err != nil {
			failf("stores: candidates %q over %d sessions: %v", q, n, err)
			progress(key, err.Error())
			continue
		}
		progress(key, time.Since(t0).Seconds())
		if q != "" && len(items) == 0 {
			failf("stores: query %q found nothing", q)
		}
	}
	progress("serverPeakRSSMB", peakRSS()>>20)
	report("tiny-sessions", res)
	return nil
}

// parseSize reads 20MB, 2GB, 512KB or a byte count (workload.ParseSize);
// a bad size ends the run.
func parseSize(s string) int64 {
	n, err := workload.ParseSize(s)
	if err != nil {
		fatal(err)
	}
	return n
}
