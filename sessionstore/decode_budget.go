package sessionstore

import (
	"sync"
	"time"

	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript"
)

// Two budgets bound what decoding zstd transcripts may cost, whatever the
// store holds and however many cores the machine has:
//
//   - memory (this file): every decode buffer over 1 MiB takes one of
//     decodeSlots process-wide slots before it is allocated (at most limit
//     + overshoot bytes each). The index pass runs one worker per core; a
//     store of compressed bombs makes each of them ask for a limit-sized
//     buffer, and all but decodeSlots wait instead of allocating. The pass
//     holds its slot while it folds the decoded text; a read that returns
//     its text (the index's surface read, Cursor.ReadAt) gives the slot back once
//     decoded, and the text is then bounded by the concurrency of those
//     requests.
//     The index pass's raw reads take a slot too before a long line grows
//     their read buffer past the read chunk, and its zstd reads take both
//     slots before a frame's compressed bytes grow it (that read buffer
//     and the frame's decode then share them).
//   - work: one read of one transcript decodes at most
//     transcript.DecodedPerReadFactor × limit bytes in all. The read limit caps each frame,
//     not their number, and frames of RLE blocks inside an ignored event
//     pass every other check (1 MiB of them decodes to 32 GiB): past this
//     budget the read fails with a read-limit error.

// decodeSlots is how many large decodes (with their text, in the index
// pass) may be in progress at once, process-wide, per read limit.
const decodeSlots = 2

// bufGate admits decodeSlots large decode buffers of one read limit at a
// time, process-wide. A buffer given back is kept for the next large
// decode instead of becoming garbage: over a store of bombs the same
// buffers are reused, so the heap does not grow by a buffer per decode
// until the collector runs. Buffers unused for spareIdle are dropped, so
// an idle server keeps none.
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

// take waits for a slot and returns a buffer of at least need bytes of
// capacity (a handed-over one when it is large enough).
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

// takeSlots waits until n slots are free and takes them at once (never
// one by one, which could deadlock against another taker); keep gives
// them all back.
func (g *bufGate) takeSlots(n int) *slot {
	g.mu.Lock()
	for g.free < n {
		g.cond.Wait()
	}
	g.free -= n
	g.mu.Unlock()
	return &slot{g: g, n: n}
}

// Buffer waits for a slot and returns it with a buffer of at least need
// bytes of capacity (transcript.DecodeMemory).
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

// dropIdle drops the kept buffers once no large decode has run for
// spareIdle.
func (g *bufGate) dropIdle() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.free == decodeSlots {
		g.spare = nil
	}
}

// bufGates holds the gate of each read limit in use (a process normally
// uses one).
var bufGates sync.Map // int64 → *bufGate

func bufGateFor(limit int64) *bufGate {
	if g, ok := bufGates.Load(limit); ok {
		return g.(*bufGate)
	}
	g, _ := bufGates.LoadOrStore(limit, newBufGate())
	return g.(*bufGate)
}

// slot is a buffer taken from a bufGate (nil for a buffer outside the
// budget; its methods do nothing then). Exactly one of reuse and keep
// gives the slot back; later calls do nothing.
type slot struct {
	g    *bufGate
	b    []byte
	n    int // slots held beyond the first (takeSlots)
	once sync.Once
}

// Reuse gives the slot back with its buffer, for the next large decode:
// only when nothing refers to the buffer any more.
func (s *slot) Reuse() {
	if s != nil {
		s.once.Do(func() { s.g.give(s.b) })
	}
}

// Keep gives the slot back without its buffer, which the caller keeps
// (and the collector frees).
func (s *slot) Keep() {
	if s != nil {
		s.once.Do(func() {
			for i := 0; i < max(s.n, 1); i++ {
				s.g.give(nil)
			}
		})
	}
}
