package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// progressLine draws the index's first-pass progress as one line on a
// terminal, redrawn in place with \r and cleared when the pass ends, so a
// person waiting on a large store sees it move while scripts reading the
// output (stdout, or stderr redirected) see nothing.
type progressLine struct {
	w     io.Writer
	now   func() time.Time
	every time.Duration

	mu       sync.Mutex
	start    time.Time
	last     time.Time
	drawn    int // runes of the line on screen (0: none)
	startAt  int // done at the first report: the rate counts this pass only
	finished bool
}

// newProgressLine returns a progress line drawing on w when w is a
// terminal, else nil (whose methods do nothing).
func newProgressLine(w io.Writer) *progressLine {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return &progressLine{w: w, now: time.Now, every: 100 * time.Millisecond}
}

// report is an IndexOptions.Progress callback: done of total transcripts
// parsed. The first report and the last are drawn; those between at most
// every p.every.
func (p *progressLine) report(done, total int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.finished {
		return
	}
	now := p.now()
	if p.start.IsZero() {
		p.start, p.startAt = now, done
	} else if done < total && now.Sub(p.last) < p.every {
		return
	}
	p.last = now
	p.draw(progressText(done, total, done-p.startAt, now.Sub(p.start)))
}

// progressText is the line: sessions read of total, the rate and the time
// left at that rate (unknown until something was read).
func progressText(done, total, read int, elapsed time.Duration) string {
	s := fmt.Sprintf("dsh-lsp: indexing sessions: %s of %s", groupDigits(done), groupDigits(total))
	if read <= 0 || elapsed <= 0 {
		return s
	}
	rate := float64(read) / elapsed.Seconds()
	left := time.Duration(float64(total-done) / rate * float64(time.Second))
	return s + fmt.Sprintf(" (%s/s, %s left)", groupDigits(int(rate+0.5)), roundLeft(left))
}

// roundLeft rounds a remaining time to what a person reads at a glance.
func roundLeft(d time.Duration) string {
	switch {
	case d < time.Second:
		return "<1s"
	case d < time.Minute:
		return d.Round(time.Second).String()
	default:
		return d.Round(10 * time.Second).String()
	}
}

// groupDigits writes n with thousands separators (12,345).
func groupDigits(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// draw replaces the line on screen with s (padding with spaces over a
// longer previous line: \r and spaces work on every terminal, escape
// sequences do not).
func (p *progressLine) draw(s string) {
	n := len([]rune(s))
	pad := ""
	if p.drawn > n {
		pad = strings.Repeat(" ", p.drawn-n)
	}
	fmt.Fprint(p.w, "\r"+s+pad)
	p.drawn = n
}

// finish clears the line, leaving the cursor where the line began, so
// what is printed next (warnings, errors) starts on a clean line.
func (p *progressLine) finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finished = true
	if p.drawn > 0 {
		fmt.Fprint(p.w, "\r"+strings.Repeat(" ", p.drawn)+"\r")
		p.drawn = 0
	}
}

// println writes a message line to the progress line's writer: the line
// is cleared first and redrawn by the next report, so the two never mix.
// Without a progress line it writes to w.
func (p *progressLine) println(w io.Writer, msg string) {
	if p == nil {
		fmt.Fprintln(w, msg)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn > 0 {
		fmt.Fprint(p.w, "\r"+strings.Repeat(" ", p.drawn)+"\r")
		p.drawn = 0
	}
	fmt.Fprintln(p.w, msg)
}
