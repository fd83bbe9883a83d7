package main

import (
	"bytes"
	"testing"
	"time"
)

func TestProgressTextGivesRateAndTimeLeft(t *testing.T) {
	for _, c := range []struct {
		done, total, read int
		elapsed           time.Duration
		want              string
	}{
		{0, 100000, 0, 0, "dsh-lsp: indexing sessions: 0 of 100,000"},
		{5000, 100000, 5000, 2 * time.Second, "dsh-lsp: indexing sessions: 5,000 of 100,000 (2,500/s, 38s left)"},
		{50000, 100000, 50000, 5 * time.Second, "dsh-lsp: indexing sessions: 50,000 of 100,000 (10,000/s, 5s left)"},
		{1000, 1000000, 1000, time.Second, "dsh-lsp: indexing sessions: 1,000 of 1,000,000 (1,000/s, 16m40s left)"},
		{7, 7, 7, 10 * time.Millisecond, "dsh-lsp: indexing sessions: 7 of 7 (700/s, <1s left)"},
		// Resumed from a cache: the rate counts only this pass's reads.
		{900, 1000, 0, time.Second, "dsh-lsp: indexing sessions: 900 of 1,000"},
	} {
		if got := progressText(c.done, c.total, c.read, c.elapsed); got != c.want {
			t.Errorf("progressText(%d, %d, %d, %v) = %q, want %q", c.done, c.total, c.read, c.elapsed, got, c.want)
		}
	}
}

// fakeClock hands out the times a test sets.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestProgressLineRedrawsInPlaceAndClears(t *testing.T) {
	var out bytes.Buffer
	clock := &fakeClock{t: time.Unix(1000, 0)}
	p := &progressLine{w: &out, now: clock.now, every: 100 * time.Millisecond}
	p.report(0, 1000)
	clock.t = clock.t.Add(10 * time.Millisecond)
	p.report(10, 1000) // too soon: not drawn
	clock.t = clock.t.Add(990 * time.Millisecond)
	p.report(500, 1000)
	p.println(&out, "dsh-lsp: warning: w")
	clock.t = clock.t.Add(time.Second)
	p.report(1000, 1000) // the last report is always drawn
	p.finish()
	p.report(1000, 1000) // after finish: nothing
	l0 := "dsh-lsp: indexing sessions: 0 of 1,000"
	l1 := "dsh-lsp: indexing sessions: 500 of 1,000 (500/s, 1s left)"
	l2 := "dsh-lsp: indexing sessions: 1,000 of 1,000 (500/s, <1s left)"
	want := "\r" + l0 +
		"\r" + l1 +
		"\r" + spaces(len(l1)) + "\r" + "dsh-lsp: warning: w\n" +
		"\r" + l2 +
		"\r" + spaces(len(l2)) + "\r"
	if got := out.String(); got != want {
		t.Errorf("terminal output\n got %q\nwant %q", got, want)
	}
}

func TestProgressLinePadsOverALongerLine(t *testing.T) {
	var out bytes.Buffer
	p := &progressLine{w: &out, now: time.Now}
	p.draw("abcdef")
	p.draw("xy")
	if got, want := out.String(), "\rabcdef\rxy    "; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestNoProgressLineOffATerminal(t *testing.T) {
	var out bytes.Buffer
	if p := newProgressLine(&out); p != nil {
		t.Fatal("a progress line on a buffer")
	}
	var p *progressLine // nil: every method does nothing but println
	p.report(1, 2)
	p.finish()
	p.println(&out, "m")
	if out.String() != "m\n" {
		t.Errorf("got %q", out.String())
	}
}

func spaces(n int) string { return string(bytes.Repeat([]byte{' '}, n)) }
