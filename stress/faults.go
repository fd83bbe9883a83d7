package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// runFaults: a client that disconnects mid-prepare, stdin closed, SIGTERM
// during prepare, the store root deleted and recreated while the server
// runs. The server must exit cleanly (or keep serving) and the session
// files must be byte-identical afterwards.
func runFaults(dir string) error {
	root, ids, before, err := hashedSources(dir)
	if err != nil {
		return err
	}
	prepText := "compare"
	for _, id := range ids {
		prepText += " " + reference.FormatMention(id, nil)
	}
	res := map[string]any{}

	// 1. In-process client disconnect while prepare reads 3 large sources.
	runtime.GC()
	baseline := runtime.NumGoroutine()
	srv := startInProcess(serverOptions(root))
	if err := srv.initialize(map[string]any{"sessionsDir": root}); err != nil {
		return err
	}
	if _, _, err := srv.start("dsh/prepare", map[string]any{"text": prepText}); err != nil {
		return err
	}
	time.Sleep(50 * time.Millisecond)
	t0 := time.Now()
	code, err := srv.disconnect(10 * time.Second)
	if err != nil {
		failf("faults: disconnect mid-prepare: %v", err)
	}
	res["disconnectExitCode"], res["disconnectStopMs"] = code, ms(time.Since(t0))
	after := waitGoroutines(baseline+*goroutineOK, 10*time.Second)
	res["disconnectGoroutines"] = fmt.Sprintf("%d -> %d", baseline, after)
	if after > baseline+*goroutineOK {
		failf("faults: %d goroutines before, %d after a client disconnect mid-prepare", baseline, after)
	}

	// 2. Store root deleted and recreated while the server runs.
	if err := rootDeletedAndRecreated(filepath.Join(dir, "small"), res); err != nil {
		failf("faults: root deleted and recreated: %v", err)
	}

	// 3 and 4. The real binary: stdin closed; SIGTERM during prepare.
	if *bin != "" {
		for _, kind := range []string{"stdin-closed", "sigterm-during-prepare"} {
			code, stopped, stderr, err := binaryFault(kind, root, prepText)
			res[kind+"ExitCode"], res[kind+"StopMs"] = code, ms(stopped)
			switch {
			case err != nil:
				failf("faults: %s: %v", kind, err)
			case strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine "):
				failf("faults: %s: the server crashed:\n%s", kind, stderr)
			}
		}
	}

	afterHash, err := hashTree(root)
	if err != nil {
		return err
	}
	if d := sameTree(before, afterHash); len(d) > 0 {
		failf("faults: store files changed: %v", d)
	}
	res["storeUnchanged"] = len(sameTree(before, afterHash)) == 0
	report("faults", res)
	return nil
}

// rootDeletedAndRecreated serves a small store, moves the root away (the
// server sees it deleted), then writes it back as new files.
func rootDeletedAndRecreated(root string, res map[string]any) error {
	if _, err := workload.Generate(root, workload.Options{Sessions: 20, CWDs: 2, Turns: 2, Compression: workload.None, Seed: 3}, nil); err != nil {
		return err
	}
	before, err := hashTree(root)
	if err != nil {
		return err
	}
	srv := startInProcess(serverOptions(root))
	defer srv.disconnect(10 * time.Second)
	if err := srv.initialize(map[string]any{"sessionsDir": root}); err != nil {
		return err
	}
	count := func(query string) (int, error) {
		var items []map[string]any
		err := srv.call("dsh/candidates", map[string]any{"query": query, "limit": 1000}, &items)
		return len(items), err
	}
	if n, err := count(""); err != nil || n != 20 {
		return fmt.Errorf("before: %d candidates, %v", n, err)
	}
	gone := root + ".gone"
	if err := os.Rename(root, gone); err != nil {
		return err
	}
	// Distinct queries bypass the server's short candidate cache.
	n, err := count("a")
	res["rootGoneCandidates"], res["rootGoneError"] = n, fmt.Sprint(err)
	if err := srv.call("dsh/prepare", map[string]any{"text": "x"}, nil); err != nil {
		return fmt.Errorf("prepare without references while the root is gone: %v", err)
	}
	// Recreate: new directories and files with the same bytes.
	if err := os.CopyFS(root, os.DirFS(gone)); err != nil {
		return err
	}
	deadline := time.Now().Add(15 * time.Second)
	for i := 0; ; i++ {
		n, err := count(fmt.Sprintf("%c", 'a'+i%2))
		if err == nil && n > 0 {
			var all []map[string]any
			if err := srv.call("dsh/candidates", map[string]any{"query": "", "limit": 999}, &all); err == nil && len(all) == 20 {
				break
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the recreated root was not served within 15s (last: %d candidates, %v)", n, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	after, err := hashTree(root)
	if err != nil {
		return err
	}
	if d := sameTree(before, after); len(d) > 0 {
		return fmt.Errorf("recreated store differs: %v", d)
	}
	os.RemoveAll(gone)
	res["rootRecreatedServed"] = true
	return nil
}

// binaryFault runs the dsh-lsp binary over stdio and injects a fault:
// stdin-closed (the editor's pipe closes after initialize) or
// sigterm-during-prepare. It returns the exit code and how long the
// process took to stop after the fault.
func binaryFault(kind, root, prepText string) (int, time.Duration, string, error) {
	cmd := exec.Command(*bin, "serve", "--sessions", root)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 0, 0, "", err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, 0, "", err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return 0, 0, "", err
	}
	c := newClient(stdout, stdin)
	if err := c.initialize(map[string]any{"sessionsDir": root}); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return 0, 0, stderr.String(), err
	}
	var t0 time.Time
	switch kind {
	case "stdin-closed":
		t0 = time.Now()
		stdin.Close()
	case "sigterm-during-prepare":
		if _, _, err := c.start("dsh/prepare", map[string]any{"text": prepText}); err != nil {
			return 0, 0, "", err
		}
		time.Sleep(100 * time.Millisecond)
		t0 = time.Now()
		cmd.Process.Signal(syscall.SIGTERM)
	}
	done := make(chan error, 1)
	go func() { io.Copy(io.Discard, stdout); done <- cmd.Wait() }()
	select {
	case err := <-done:
		stopped := time.Since(t0)
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			return -1, stopped, stderr.String(), err
		}
		code := cmd.ProcessState.ExitCode()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return code, stopped, stderr.String(), fmt.Errorf("killed by %v instead of exiting", ws.Signal())
		}
		return code, stopped, stderr.String(), nil
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		<-done
		return -1, 15 * time.Second, stderr.String(), fmt.Errorf("still running 15s after the fault")
	}
}
