//go:build linux || darwin || freebsd

package main

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/creack/pty"
)

// TestCLIProgressLineOnTerminal runs `candidates` on a store it has never
// indexed, with stderr on a pseudo-terminal and then on a pipe: on the
// terminal the first pass draws its progress line (redrawn with \r, ending
// with every session read and cleared), on the pipe stderr stays empty,
// and stdout is the same either way.
func TestCLIProgressLineOnTerminal(t *testing.T) {
	const sessions = 7 // transcripts in the fixture store
	args := []string{"candidates", "--sessions", storeRaw, "--target-cwd", "/home/bob/scratch"}

	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	cmd := exec.Command(binary, args...)
	cmd.Env = cleanEnv(t.TempDir()) // an empty cache: the first pass parses every transcript
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close() // the child holds the terminal now; reads end when it exits
	var onTerm bytes.Buffer
	if _, err := io.Copy(&onTerm, ptmx); err != nil && !errors.Is(err, syscall.EIO) {
		t.Fatalf("reading the terminal: %v", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("candidates on a terminal: %v\n%s", err, onTerm.String())
	}
	term := onTerm.String()
	final := regexp.MustCompile(`\rdsh-lsp: indexing sessions: 7 of 7 \([0-9,]+/s, [^)]+ left\)`)
	if !strings.HasPrefix(term, "\rdsh-lsp: indexing sessions: ") || !final.MatchString(term) {
		t.Errorf("terminal shows no progress line ending at %d of %d: %q", sessions, sessions, term)
	}
	// Cleared at the end: the last thing on the terminal is the line
	// overwritten with spaces and the cursor back at its start.
	if !regexp.MustCompile(`\r +\r$`).MatchString(term) {
		t.Errorf("progress line not cleared at the end: %q", term)
	}
	if strings.Contains(term, "\n") {
		t.Errorf("progress line wrote a newline: %q", term)
	}

	r := runCLI(t, "", args...) // stderr on a pipe, empty cache again
	if r.code != 0 {
		t.Fatalf("candidates on a pipe: %d %s", r.code, r.stderr)
	}
	if r.stderr != "" {
		t.Errorf("stderr not a terminal, yet written: %q", r.stderr)
	}
	if r.stdout != stdout.String() || !strings.Contains(r.stdout, "sessionId") {
		t.Errorf("stdout differs with stderr on a terminal:\nterminal: %s\npipe:     %s", stdout.String(), r.stdout)
	}
}
