package sessionstore

import (
	"sync"
	"time"
)

// Two budgets bound what decoding zstd transcripts may cost, whatever the
// store holds and however many cores the machine has:
//
//   - memory: every decode buffer over smallDecode bytes takes one of
//     decodeSlots process-wide slots before it is allocated (at most limit
//     + overshoot bytes each). The index pass runs one worker per core; a
//     store of compressed bombs makes each of them ask for a limit-sized
//     buffer, and all but decodeSlots wait instead of allocating. The pass
//     holds its slot while it folds the decoded text; a read that returns
//     its text (the index's surface read) gives the slot back once
//     decoded, and the text is then bounded by the concurrency of those
//     requests.
//     The index pass's raw reads take a slot too before a long line grows
//     their read buffer past the read chunk, and its zstd reads take both
//     slots before a frame's compressed bytes grow it (that read buffer
//     and the frame's decode then share them).
//   - work: one read of one transcript decodes at most
//     decodedPerRead(limit) bytes in all. The read limit caps each frame,
//     not their number, and frames of RLE blocks inside an ignored event
//     pass every other check (1 MiB of them decodes to 32 GiB): past this
//     budget the read fails with a read-limit error.

// smallDecode is the largest decode buffer taken outside the memory
// budget: event frames are a few hundred bytes to a few KiB, and each
// worker holds at most one such buffer.
const smallDecode = 1 << 20

// decodeSlots is how many large decodes (with their text, in the index
// pass) may be in progress at once, process-wide, per read limit.
const decodeSlots = 2

// decodedPerReadFactor times the read limit is the decoded-bytes budget of
// one read: generous for real logs (every frame of a dsh log is one
// batch of events, the surface a read keeps is itself held to the limit)
// and a bounded amount of work for a bomb.
const decodedPerReadFactor = 8

// decodedPerRead is the decoded-bytes budget of one read.
func decodedPerRead(limit int64) int64 { return decodedPerReadFactor * limitOr(limit) }

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

// takeSlot waits for a slot for a buffer the caller allocates itself (a
// long raw line's read buffer); give it back with keep.
func (g *bufGate) takeSlot() *slot { return g.takeSlots(1) }

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

// reuse gives the slot back with its buffer, for the next large decode:
// only when nothing refers to the buffer any more.
func (s *slot) reuse() {
	if s != nil {
		s.once.Do(func() { s.g.give(s.b) })
	}
}

// keep gives the slot back without its buffer, which the caller keeps
// (and the collector frees).
func (s *slot) keep() {
	if s != nil {
		s.once.Do(func() {
			for i := 0; i < max(s.n, 1); i++ {
				s.g.give(nil)
			}
		})
	}
}

// decodeBuf returns the output buffer for a frame of at most hi decoded
// bytes and its slot: dst when it is large enough; nil for a small frame
// (the decoder sizes it from the input); else a buffer of up to the limit
// plus overshoot from the decode memory budget, taken before anything is
// allocated (the slot is then not nil).
func decodeBuf(dst []byte, hi, limit int64) ([]byte, *slot) {
	need := min(hi, limit+overshoot)
	if int64(cap(dst)) >= need {
		return dst[:0], nil
	}
	if need <= smallDecode {
		if dst != nil {
			return make([]byte, 0, need), nil
		}
		return nil, nil
	}
	g := bufGateFor(limit)
	b := g.take(need)
	return b, &slot{g: g, b: b}
}

// decodedBudget counts what one read of one transcript has decoded.
type decodedBudget struct {
	limit int64
	used  int64
}

// admit refuses a frame known (from its raw and RLE block headers) to
// decode to lo bytes when that would pass the budget, before decoding it.
// A frame over the read limit is left to the frame's own, more precise,
// read-limit error.
func (b *decodedBudget) admit(lo int64) error {
	if b == nil || lo > limitOr(b.limit) {
		return nil
	}
	if b.used+lo > decodedPerRead(b.limit) {
		return b.exceeded()
	}
	return nil
}

// spend counts n decoded bytes; past the budget it returns the read-limit
// error.
func (b *decodedBudget) spend(n int) error {
	if b == nil {
		return nil
	}
	b.used += int64(n)
	if b.used > decodedPerRead(b.limit) {
		return b.exceeded()
	}
	return nil
}

func (b *decodedBudget) exceeded() error {
	return limitf(limitOr(b.limit), "the zstd log decodes to more than %s in one read (%d × the read limit)",
		sizeString(decodedPerRead(b.limit)), decodedPerReadFactor)
}
