package lsp

import (
	"context"
	"sync"
	"sync/atomic"

	"go.lsp.dev/jsonrpc2"
)

// pooledAnswer is a handler's result written in a pooled buffer (a
// completion list: tens of kilobytes on every keystroke of a mention
// query). dispatch lends the buffer to jsonrpc2 as the response's raw
// result, and the stream takes it back once the response is written, so a
// burst of keystrokes allocates no answer: the collector's cycles, each of
// which slows the few requests it overlaps at 100,000 sessions, come that
// much less often.
type pooledAnswer struct{ buf *[]byte }

// answerBuffers holds the spare answer buffers: as many as answers are
// written at once while typing (one, a few under load), and a bound on
// what an overloaded server keeps (a sync.Pool there kept every buffer in
// flight alive through a collection: 15-35 MB more peak RSS at 2,000
// requests a second). One larger than maxPooledAnswer (an answer listing
// kilobyte titles) goes to the collector.
var answerBuffers = make(chan *[]byte, 8)

const maxPooledAnswer = 256 << 10

// newPooledAnswer returns an empty answer buffer, a spare one if any.
func newPooledAnswer() pooledAnswer {
	select {
	case buf := <-answerBuffers:
		*buf = (*buf)[:0]
		return pooledAnswer{buf}
	default:
		return pooledAnswer{new([]byte)}
	}
}

// putAnswerBuffer keeps buf as a spare unless it is large or there are
// enough.
func putAnswerBuffer(buf *[]byte) {
	if cap(*buf) > maxPooledAnswer {
		return
	}
	select {
	case answerBuffers <- buf:
	default:
	}
}

// lentAnswers tracks the pooled answers handed to jsonrpc2 until their
// responses are written. jsonrpc2 writes a request's response on the
// stream with the context it gave the handler (and after the handler
// returned), so the stream's Write, which returns once the frame is
// written, gives the buffer lent for that context back. At most len(slots)
// are tracked: one never given back (a response not written because the
// connection closed; a library that would write with another context) is
// dropped to the collector when its slot is reused, never put back.
type lentAnswers struct {
	mu    sync.Mutex
	slots [16]lentAnswer
	next  int
	// returned counts the buffers given back (tests).
	returned atomic.Int64
}

type lentAnswer struct {
	ctx context.Context
	buf *[]byte
}

// lend records that a's buffer is the result of the request whose
// handler context is ctx and returns it as that result.
func (l *lentAnswers) lend(ctx context.Context, a pooledAnswer) jsonrpc2.RawMessage {
	l.mu.Lock()
	l.slots[l.next] = lentAnswer{ctx, a.buf}
	l.next = (l.next + 1) % len(l.slots)
	l.mu.Unlock()
	return jsonrpc2.RawMessage(*a.buf)
}

// giveBack puts the buffer lent for ctx back in the pool: its response
// has been written.
func (l *lentAnswers) giveBack(ctx context.Context) {
	l.mu.Lock()
	var buf *[]byte
	for i := range l.slots {
		if s := &l.slots[i]; s.buf != nil && s.ctx == ctx {
			buf = s.buf
			*s = lentAnswer{}
			break
		}
	}
	l.mu.Unlock()
	if buf == nil {
		return
	}
	l.returned.Add(1)
	putAnswerBuffer(buf)
}

// MarshalJSON writes the answer as it is: the raw result, should the
// answer reach an encoder rather than dispatch's lend.
func (a pooledAnswer) MarshalJSON() ([]byte, error) { return *a.buf, nil }
