package sessionstore

import (
	"sync"
	"time"

	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript"
)

// decodeSlots is how many large decodes (over 1 MiB, with their text in
// the index pass) may be in progress at once, process-wide, per read
// limit: the index pass runs one worker per core, and over a store of
// compressed bombs all but decodeSlots of them wait instead of each
// allocating a limit-sized buffer.
const decodeSlots = 2

// bufGate is the transcript.DecodeMemory of one read limit. A buffer given
// back is kept for the next large decode, so over a store of bombs the
// heap does not grow by a buffer per decode; an idle server drops them.
type bufGate struct {
	mu    sync.Mutex
	cond  *sync.Cond
	free  int
	spare [][]byte
	idle  *time.Timer
}

// spareIdle is how long given-back buffers are kept without a taker.
const spareIdle = 2 * time.Second

func newBufGate() *bufGate {
	g := &bufGate{free: decodeSlots}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// take waits for a slot and returns a buffer of at least need bytes.
func (g *bufGate) take(need int64) []byte {
	g.mu.Lock()
	for g.free == 0 {
		g.cond.Wait()
	}
	g.free--
	var b []byte
	if n := len(g.spare); n > 0 {
		b, g.spare = g.spare[n-1], g.spare[:n-1]
	}
	g.mu.Unlock()
	if int64(cap(b)) < need {
		b = make([]byte, 0, need)
	}
	return b[:0]
}

// takeSlots takes n slots at once (one by one could deadlock against
// another taker).
func (g *bufGate) takeSlots(n int) *slot {
	g.mu.Lock()
	for g.free < n {
		g.cond.Wait()
	}
	g.free -= n
	g.mu.Unlock()
	return &slot{g: g, n: n}
}

// Buffer waits for a slot and returns it with a buffer of need bytes.
func (g *bufGate) Buffer(need int64) ([]byte, transcript.Slot) {
	b := g.take(need)
	return b, &slot{g: g, b: b}
}

// ReserveOne waits for a slot for a buffer the caller allocates.
func (g *bufGate) ReserveOne() transcript.Slot { return g.takeSlots(1) }

// ReserveAll waits for every slot at once.
func (g *bufGate) ReserveAll() transcript.Slot { return g.takeSlots(decodeSlots) }

// give returns a slot and its buffer.
func (g *bufGate) give(b []byte) {
	g.mu.Lock()
	g.free++
	if b != nil {
		g.spare = append(g.spare, b)
	}
	if g.idle == nil {
		g.idle = time.AfterFunc(spareIdle, g.dropIdle)
	} else {
		g.idle.Reset(spareIdle)
	}
	g.mu.Unlock()
	g.cond.Signal()
}

// dropIdle drops the kept buffers when no slot is taken.
func (g *bufGate) dropIdle() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.free == decodeSlots {
		g.spare = nil
	}
}

// bufGates holds the gate of each read limit in use.
var bufGates sync.Map // int64 → *bufGate

func bufGateFor(limit int64) *bufGate {
	if g, ok := bufGates.Load(limit); ok {
		return g.(*bufGate)
	}
	g, _ := bufGates.LoadOrStore(limit, newBufGate())
	return g.(*bufGate)
}

// slot is a buffer taken from a bufGate (nil: none); the first of Reuse
// and Keep gives it back.
type slot struct {
	g    *bufGate
	b    []byte
	n    int // slots held beyond the first (takeSlots)
	once sync.Once
}

// Reuse gives the slot back with its buffer, which nothing refers to.
func (s *slot) Reuse() {
	if s != nil {
		s.once.Do(func() { s.g.give(s.b) })
	}
}

// Keep gives the slot back without its buffer.
func (s *slot) Keep() {
	if s != nil {
		s.once.Do(func() {
			for i := 0; i < max(s.n, 1); i++ {
				s.g.give(nil)
			}
		})
	}
}
