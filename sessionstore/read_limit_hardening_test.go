//go:build linux

package sessionstore_test

// Read limits against the real binary: zstd bombs (a torn
// final frame of RLE blocks, a header frame bomb, complete frames holding a
// ~900 MB message) and a raw session with one huge message line. The bombs
// are generated here (a few hundred KB on disk; nothing large is
// committed). Each run is a subprocess whose peak RSS (getrusage maxrss,
// or VmHWM for the server) must stay under a stated bound derived from the
// read limit; the bombs fail per session with a read-limit error, the good
// session is still listed and prepared, the store is byte-for-byte
// unchanged, and a second run answers from the cache without decoding the
// bombs again.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"go.lsp.dev/jsonrpc2"

	"github.com/dsh-lsp/dsh-lsp/lsp/lsptest"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// bombStore writes a zstd store: one good session and the bombs of
// attacks 1 and 2. It returns the ids of the bombs that are listed (their
// header is fine) and of the one that is not.
func bombStore(t *testing.T, root string) (listedBombs []string, headerBomb string) {
	good := "good"
	writeZstdSession(t, root, good, zframe(hdrLine(good)), zframe(eventLines(good, "good session")))

	// Attack 1: a torn final frame of 65,536 RLE blocks: 262 KB on disk,
	// 8 GiB of output.
	torn := rleBlocks(zstdFrameHeader(), 'x', 65536)
	writeZstdSession(t, root, "torn-bomb", zframe(hdrLine("torn-bomb")), zframe(eventLines("torn-bomb", "torn")), torn)

	// Attack 2: complete frames near the old 1 GiB cap. Four sessions each
	// holding a ~900 MB message (27 KB on disk each).
	for i := 0; i < 4; i++ {
		id := fmt.Sprintf("big-message-%d", i)
		f := rawBlocks(zstdFrameHeader(), []byte(userMessagePrefix), false)
		f = rleBlocks(f, 'a', 6866)
		f = rawBlocks(f, []byte(userMessageSuffix), true)
		writeZstdSession(t, root, id, zframe(hdrLine(id)), zframe(eventLines(id, "big")), f)
		listedBombs = append(listedBombs, id)
	}
	// ... and a header frame decoding to 4 GiB of spaces before its line
	// (131 KB on disk): the 1 MiB header bound counts decoded bytes.
	headerBomb = "header-bomb"
	h := rleBlocks(zstdFrameHeader(), ' ', 32768)
	h = rawBlocks(h, []byte(hdrLine(headerBomb)), true)
	writeZstdSession(t, root, headerBomb, h, zframe(eventLines(headerBomb, "hb")))
	// A frame of real compressed blocks (a 2 × DefaultReadLimit message
	// of a repeated 8-byte pattern, a few tens of KB on disk): its size
	// shows only by decoding, which must stop at the limit. Also torn
	// (its last bytes cut off).
	cb := compressedBomb(t)
	writeZstdSession(t, root, "compressed-bomb", zframe(hdrLine("compressed-bomb")), zframe(eventLines("compressed-bomb", "cb")), cb)
	writeZstdSession(t, root, "compressed-torn-bomb", zframe(hdrLine("compressed-torn-bomb")), zframe(eventLines("compressed-torn-bomb", "ctb")), cb[:len(cb)-64])
	listedBombs = append(listedBombs, "compressed-bomb", "compressed-torn-bomb")
	return append([]string{"torn-bomb"}, listedBombs...), headerBomb
}

var (
	cbOnce  sync.Once
	cbFrame []byte
)

// patternReader yields an endless repeated 8-byte pattern.
type patternReader struct{}

func (patternReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = "abcdefgh"[i%8]
	}
	return len(p) - len(p)%8, nil
}

// compressedBomb is one zstd frame (unknown content size) of a user
// message line whose text is 2 × DefaultReadLimit (256 MiB) of a repeated
// pattern: over every limit the tests use, so decoding must stop at the
// limit, and a quarter of the 1 GiB it was, whose generation alone cost
// a CPU-second.
func compressedBomb(t *testing.T) []byte {
	cbOnce.Do(func() {
		var buf bytes.Buffer
		w, err := zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(1<<20))
		if err != nil {
			panic(err)
		}
		io.WriteString(w, userMessagePrefix)
		if _, err := io.CopyN(w, patternReader{}, 2*sessionstore.DefaultReadLimit); err != nil {
			panic(err)
		}
		io.WriteString(w, userMessageSuffix)
		if err := w.Close(); err != nil {
			panic(err)
		}
		cbFrame = buf.Bytes()
	})
	return cbFrame
}

// treeSum fingerprints every entry under root without following links:
// path, type, mode, size, mtime and the sha256 of regular files.
func treeSum(t *testing.T, root string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%v\x00%d\x00%d\x00", path, fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		if fi.Mode().IsRegular() {
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			if _, err := io.Copy(h, f); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// dshLSP returns the real binary: DSH_LSP_TEST_BIN when set (built by
// the caller for this platform; there is no go command under Wine), else
// built once for the whole test binary into a temporary directory that
// TestMain removes (the tests using it run in parallel).
func dshLSP(t *testing.T) string {
	t.Helper()
	if prebuilt := os.Getenv("DSH_LSP_TEST_BIN"); prebuilt != "" {
		return prebuilt
	}
	p, err := builtBin()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// builtBin builds the binary at its first call.
var builtBin = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "dsh-lsp-sessionstore-test-")
	if err != nil {
		return "", err
	}
	sessionstore.AtTestExit(func() { os.RemoveAll(dir) })
	p := filepath.Join(dir, "dsh-lsp")
	out, err := exec.Command("go", "build", "-o", p, "github.com/dsh-lsp/dsh-lsp/cmd/dsh-lsp").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return p, nil
})

// cliRun is one finished CLI run.
type cliRun struct {
	stdout, stderr string
	exit           int
	maxRSS         int64 // bytes
	took           time.Duration
}

// measureEnv makes this test binary a launcher (see init): it runs the
// command after "--" and reports the child's peak RSS on its last stderr
// line. getrusage's maxrss of a child started directly from the test
// process would include the test process's own peak: Go starts children
// with vfork semantics, and Linux carries the shared (parent's) high-water
// mark into the child's maxrss at exec. The launcher is this binary before
// any test ran, a few MiB.
const measureEnv = "DSH_LSP_HARDENING_MEASURE"

const maxRSSTag = "\nDSH_LSP_CHILD_MAXRSS_KB="

func init() {
	if os.Getenv(measureEnv) != "1" {
		return
	}
	args := os.Args[1:]
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, measureEnv+"=") {
			env = append(env, e)
		}
	}
	cmd.Env = env
	err := cmd.Run()
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, "launcher:", err)
		os.Exit(125)
	}
	var kb int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		kb = ru.Maxrss
	}
	fmt.Fprintf(os.Stderr, "%s%d\n", maxRSSTag, kb)
	os.Exit(cmd.ProcessState.ExitCode())
}

// runCLI runs the binary with args, HOME and the cache in home, through
// the measuring launcher.
func runCLI(t *testing.T, home string, env []string, args ...string) cliRun {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, append([]string{"--", dshLSP(t)}, args...)...)
	cmd.Env = append([]string{measureEnv + "=1", "HOME=" + home, "XDG_CACHE_HOME=" + filepath.Join(home, "cache"), "PATH=" + os.Getenv("PATH")}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	err = cmd.Run()
	r := cliRun{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(t0)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.exit = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	i := strings.LastIndex(r.stderr, maxRSSTag)
	if i < 0 {
		t.Fatalf("%v: the launcher reported no peak RSS (exit %d): %s", args, r.exit, r.stderr)
	}
	kb, _ := strconv.ParseInt(strings.TrimSpace(r.stderr[i+len(maxRSSTag):]), 10, 64)
	r.maxRSS, r.stderr = kb<<10, r.stderr[:i]
	return r
}

func mentionOf(t *testing.T, id string) string {
	return "@[s](" + reference.EncodeURI(id) + ")"
}

// TestReadLimitBombsCLI runs candidates and prepare over the bomb store
// with a 32 MiB read limit and with the default (256 MiB).
func TestReadLimitBombsCLI(t *testing.T) {
	t.Parallel()
	if testing.Short() || raceEnabled {
		t.Skip("builds and runs the binary over multi-GiB bombs")
	}
	root := filepath.Join(t.TempDir(), "sessions")
	bombs, headerBomb := bombStore(t, root)
	before := treeSum(t, root)

	for _, tc := range []struct {
		name  string
		flags []string
		limit int64
		// bound is the stated peak-RSS bound of one run.
		bound int64
	}{
		{"limit 32 MiB", []string{"--max-read-mb", "32"}, 32 * mib, 3*32*mib + 64*mib},
		{"default limit", nil, sessionstore.DefaultReadLimit, 3*sessionstore.DefaultReadLimit + 64*mib},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			args := func(cmd string, rest ...string) []string {
				return append(append([]string{cmd, "--sessions", root}, tc.flags...), rest...)
			}
			first := runCLI(t, home, nil, args("candidates")...)
			t.Logf("candidates (no cache): exit %d, peak RSS %d MiB (bound %d MiB), %v", first.exit, first.maxRSS>>20, tc.bound>>20, first.took.Round(time.Millisecond))
			if first.exit != 0 {
				t.Fatalf("candidates failed: %s%s", first.stdout, first.stderr)
			}
			var items []struct {
				SessionID, Label string
			}
			if err := json.Unmarshal([]byte(first.stdout), &items); err != nil {
				t.Fatalf("candidates output: %v\n%s", err, first.stdout)
			}
			listed := map[string]string{}
			for _, it := range items {
				listed[it.SessionID] = it.Label
			}
			if listed["good"] != "good session" {
				t.Errorf("good session: listed as %q, want its title", listed["good"])
			}
			if _, ok := listed[headerBomb]; ok {
				t.Errorf("the header bomb is listed")
			}
			if first.maxRSS > tc.bound {
				t.Errorf("candidates peak RSS %d MiB, over the bound of %d MiB", first.maxRSS>>20, tc.bound>>20)
			}

			// A restart answers from the cache: the failures are
			// remembered, nothing is decoded again.
			second := runCLI(t, home, nil, args("candidates")...)
			t.Logf("candidates (cache): peak RSS %d MiB, %v", second.maxRSS>>20, second.took.Round(time.Millisecond))
			if second.exit != 0 || second.stdout != first.stdout {
				t.Errorf("second candidates differ: exit %d\n%s\nwant\n%s", second.exit, second.stdout, first.stdout)
			}
			if second.maxRSS > 96*mib {
				t.Errorf("candidates from the cache peaked at %d MiB: the bombs were decoded again", second.maxRSS>>20)
			}

			good := runCLI(t, home, nil, args("prepare", "see "+mentionOf(t, "good"))...)
			if good.exit != 0 || !strings.Contains(good.stdout, "good session") {
				t.Errorf("prepare of the good session: exit %d\n%s%s", good.exit, good.stdout, good.stderr)
			}
			for _, id := range append(bombs, headerBomb) {
				r := runCLI(t, home, nil, args("prepare", "see "+mentionOf(t, id))...)
				t.Logf("prepare %s: exit %d, peak RSS %d MiB, %v: %s", id, r.exit, r.maxRSS>>20, r.took.Round(time.Millisecond), firstLine(r.stdout+r.stderr))
				if r.exit == 0 {
					t.Errorf("prepare of %s succeeded", id)
				}
				if id != headerBomb && !strings.Contains(r.stdout+r.stderr, "read limit") {
					t.Errorf("prepare of %s: error does not name the read limit: %s%s", id, r.stdout, r.stderr)
				}
				if r.maxRSS > tc.bound {
					t.Errorf("prepare of %s: peak RSS %d MiB, over the bound of %d MiB", id, r.maxRSS>>20, tc.bound>>20)
				}
			}
		})
	}
	if after := treeSum(t, root); after != before {
		t.Errorf("the store changed")
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// TestReadLimitHugeLine is attack 8: a raw session holding one huge
// message line. Over the limit it fails per session, the other session is
// listed and prepared, and the run stays bounded. The stated bound is
// 5 × limit + 64 MiB: a streamed read holds the line in a buffer grown to
// at most limit+1 bytes (≤ 2 × limit with the copy it grew from), and a
// prepare reads the session's title and surface in parallel. The
// explicit-limit cases use 16 MiB (a 48 MiB line), which takes the same
// path as any limit; only the default-limit case needs a line over
// DefaultReadLimit (160 MiB to write, hash and read), so it runs in CI
// (DSH_LONG_TESTS) and not in a plain go test.
func TestReadLimitHugeLine(t *testing.T) {
	t.Parallel()
	if testing.Short() || raceEnabled {
		t.Skip("writes a session of up to 160 MiB")
	}
	long := sessionstore.LongTests()
	root := filepath.Join(t.TempDir(), "sessions")
	writeRawSession(t, root, "good", "good session")
	path := writeRawSession(t, root, "huge-line", "huge")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	lineBytes := int64(48 << 20)
	if long {
		lineBytes = sessionstore.DefaultReadLimit + 32<<20
	}
	w := io.Writer(f)
	io.WriteString(w, `{"type":"user/message","seq":4,"time":1786003000005,"data":{"content":[{"type":"text","text":"`)
	chunk := bytes.Repeat([]byte("a"), 1<<20)
	for i := int64(0); i < lineBytes>>20; i++ {
		w.Write(chunk)
	}
	io.WriteString(w, `"}],"source":{"kind":"user"},"role":"user","id":"a7000000-0000-4000-8000-000000000002"},"surfaceOp":"append"}`+"\n")
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	before := treeSum(t, root)
	home := t.TempDir()

	for _, tc := range []struct {
		name   string
		flags  []string
		fails  bool
		bound  int64
		target string
	}{
		{"default limit", nil, true, 5*sessionstore.DefaultReadLimit + 64*mib, "huge-line"},
		{"limit 16 MiB", []string{"--max-read-mb", "16"}, true, 5*16*mib + 64*mib, "huge-line"},
		{"limit 16 MiB, good session", []string{"--max-read-mb", "16"}, false, 5*16*mib + 64*mib, "good"},
	} {
		if tc.flags == nil && !long {
			continue // the line is under the default limit
		}
		args := append(append([]string{"prepare", "--sessions", root}, tc.flags...), "see "+mentionOf(t, tc.target))
		r := runCLI(t, home, nil, args...)
		t.Logf("%s: prepare %s: exit %d, peak RSS %d MiB (bound %d MiB), %v: %s", tc.name, tc.target, r.exit, r.maxRSS>>20, tc.bound>>20, r.took.Round(time.Millisecond), firstLine(r.stdout+r.stderr))
		if tc.fails != (r.exit != 0) {
			t.Errorf("%s: exit %d, want failure %v: %s%s", tc.name, r.exit, tc.fails, firstLine(r.stdout), r.stderr)
		}
		if tc.fails && !strings.Contains(r.stdout+r.stderr, "read limit") {
			t.Errorf("%s: error does not name the read limit: %s%s", tc.name, r.stdout, r.stderr)
		}
		if r.maxRSS > tc.bound {
			t.Errorf("%s: peak RSS %d MiB, over the bound of %d MiB", tc.name, r.maxRSS>>20, tc.bound>>20)
		}
	}
	r := runCLI(t, home, nil, "candidates", "--sessions", root, "--max-read-mb", "16")
	if r.maxRSS > 5*16*mib+64*mib {
		t.Errorf("candidates: peak RSS %d MiB, over the bound of %d MiB", r.maxRSS>>20, (5*16*mib+64*mib)>>20)
	}
	if r.exit != 0 || !strings.Contains(r.stdout, "good session") {
		t.Errorf("candidates: exit %d, good session missing: %s%s", r.exit, r.stdout, r.stderr)
	}
	t.Logf("candidates (limit 16 MiB): peak RSS %d MiB", r.maxRSS>>20)
	if after := treeSum(t, root); after != before {
		t.Errorf("the store changed")
	}
}

// rwcPipe joins a child's stdout and stdin into one stream.
type rwcPipe struct {
	io.ReadCloser
	io.WriteCloser
}

func (c rwcPipe) Close() error { c.WriteCloser.Close(); return c.ReadCloser.Close() }

// vmHWM returns the peak RSS of a running process (/proc/pid/status).
func vmHWM(t *testing.T, pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// TestReadLimitBombsServer runs the LSP server over the bomb store with a
// 32 MiB read limit (DSH_LSP_READ_LIMIT_MB): every bomb prepare fails with
// a read-limit error, the good session keeps being listed and prepared
// between them, and the server's peak RSS stays under the bound.
func TestReadLimitBombsServer(t *testing.T) {
	t.Parallel()
	if testing.Short() || raceEnabled {
		t.Skip("builds and runs the binary over multi-GiB bombs")
	}
	const bound = 256 * mib
	root := filepath.Join(t.TempDir(), "sessions")
	bombs, headerBomb := bombStore(t, root)
	before := treeSum(t, root)
	home := t.TempDir()
	cmd := exec.Command(dshLSP(t), "--stdio")
	cmd.Env = []string{"HOME=" + home, "XDG_CACHE_HOME=" + filepath.Join(home, "cache"), "PATH=" + os.Getenv("PATH"), "DSH_LSP_READ_LIMIT_MB=32"}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("server stderr:\n%s", stderr.String())
		}
	})
	ed := lsptest.NewEditor(t, jsonrpc2.NewHeaderStream(rwcPipe{stdout, stdin}))
	if _, err := ed.Initialize(map[string]any{"sessionsDir": root}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	checkGood := func(step string) {
		var items []struct{ SessionID, Label string }
		if err := ed.Call(ctx, "dsh/candidates", map[string]any{}, &items); err != nil {
			t.Fatalf("%s: candidates: %v", step, err)
		}
		var ids []string
		found := false
		for _, it := range items {
			ids = append(ids, it.SessionID)
			found = found || (it.SessionID == "good" && it.Label == "good session")
		}
		sort.Strings(ids)
		if !found {
			t.Errorf("%s: good session not listed with its title: %v", step, ids)
		}
		var res struct{ Content string }
		if err := ed.Call(ctx, "dsh/prepare", map[string]any{"text": "see " + mentionOf(t, "good")}, &res); err != nil {
			t.Errorf("%s: prepare good: %v", step, err)
		}
	}
	checkGood("start")
	for _, id := range append(bombs, headerBomb) {
		var res json.RawMessage
		err := ed.Call(ctx, "dsh/prepare", map[string]any{"text": "see " + mentionOf(t, id)}, &res)
		if err == nil {
			t.Errorf("prepare %s succeeded", id)
		} else if id != headerBomb && !strings.Contains(err.Error(), "read limit") {
			t.Errorf("prepare %s: error does not name the read limit: %v", id, err)
		}
		checkGood("after " + id)
	}
	peak := vmHWM(t, cmd.Process.Pid)
	t.Logf("server peak RSS (VmHWM) %d MiB, bound %d MiB", peak>>20, bound>>20)
	if peak > bound {
		t.Errorf("server peak RSS %d MiB, over the bound of %d MiB", peak>>20, bound>>20)
	}
	ed.Shutdown()
	if after := treeSum(t, root); after != before {
		t.Errorf("the store changed")
	}
}
