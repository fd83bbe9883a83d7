package transcript

import (
	"sync"
	"time"
)

// smallDecode is the largest decode buffer taken outside the memory
// budget: event frames are a few hundred bytes to a few KiB.
const smallDecode = 1 << 20

// DecodedPerReadFactor times the read limit is the decoded-bytes budget of
// one read: generous for real logs, a bounded amount of work for a bomb.
const DecodedPerReadFactor = 8

// decodedPerRead is the decoded-bytes budget of one read.
func decodedPerRead(limit int64) int64 { return DecodedPerReadFactor * limit }

// decodeBuf returns the output buffer for a frame of at most hi decoded
// bytes and its slot: dst when large enough; nil for a small frame (the
// decoder sizes it); else a buffer of up to limit plus overshoot, from the
// memory budget unless held says the read holds every slot already.
func decodeBuf(mem *Memory, dst []byte, hi, limit int64, held bool) ([]byte, *slot) {
	need := min(hi, limit+overshoot)
	switch {
	case int64(cap(dst)) >= need:
		return dst[:0], nil
	case need <= smallDecode && dst == nil:
		return nil, nil
	case need <= smallDecode || mem == nil || held:
		return make([]byte, 0, need), nil
	}
	return mem.buffer(need)
}

// decodeSlots is how many large decodes (with their text, in the index
// pass) may be in progress at once, process-wide, per read limit: the
// index pass runs one worker per core, and over a store of compressed
// bombs all but decodeSlots of them wait instead of each allocating a
// limit-sized buffer.
const decodeSlots = 2

// spareIdle is how long given-back buffers are kept without a taker.
const spareIdle = 2 * time.Second

// Memory is the process-wide decode memory budget of one read limit
// (MemoryFor): every decode buffer over smallDecode bytes takes one of its
// slots before it is allocated. A buffer given back is kept for the next
// large decode, so over a store of bombs the heap does not grow by a
// buffer per decode; an idle budget drops them.
type Memory struct {
	mu    sync.Mutex
	cond  *sync.Cond
	free  int
	spare [][]byte
	idle  *time.Timer
}

// memories holds the budget of each read limit in use.
var memories sync.Map // int64 → *Memory

// MemoryFor returns the decode memory budget of a read limit.
func MemoryFor(limit int64) *Memory {
	if m, ok := memories.Load(limit); ok {
		return m.(*Memory)
	}
	m := &Memory{free: decodeSlots}
	m.cond = sync.NewCond(&m.mu)
	v, _ := memories.LoadOrStore(limit, m)
	return v.(*Memory)
}

// DropSpareBuffers drops the buffers every idle budget keeps for reuse
// now, as its idle timer does after spareIdle.
func DropSpareBuffers() {
	memories.Range(func(_, m any) bool { m.(*Memory).dropIdle(); return true })
}

// buffer waits for a slot and returns it with a buffer of at least need
// bytes (a given-back one when large enough).
func (m *Memory) buffer(need int64) ([]byte, *slot) {
	m.mu.Lock()
	for m.free == 0 {
		m.cond.Wait()
	}
	m.free--
	var b []byte
	if n := len(m.spare); n > 0 {
		b, m.spare = m.spare[n-1], m.spare[:n-1]
	}
	m.mu.Unlock()
	if int64(cap(b)) < need {
		b = make([]byte, 0, need)
	}
	return b[:0], &slot{m: m, b: b[:0]}
}

// reserve waits until n slots are free and takes them at once (one by
// one could deadlock against another taker), for a buffer the caller
// allocates.
func (m *Memory) reserve(n int) *slot {
	m.mu.Lock()
	for m.free < n {
		m.cond.Wait()
	}
	m.free -= n
	m.mu.Unlock()
	return &slot{m: m, n: n}
}

// give returns a slot and its buffer.
func (m *Memory) give(b []byte) {
	m.mu.Lock()
	m.free++
	if b != nil {
		m.spare = append(m.spare, b)
	}
	if m.idle == nil {
		m.idle = time.AfterFunc(spareIdle, m.dropIdle)
	} else {
		m.idle.Reset(spareIdle)
	}
	m.mu.Unlock()
	m.cond.Signal()
}

// dropIdle drops the kept buffers when no slot is taken.
func (m *Memory) dropIdle() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.free == decodeSlots {
		m.spare = nil
	}
}

// slot is memory taken from a Memory (nil: none, its methods do nothing);
// the first of reuse and keep gives it back.
type slot struct {
	m    *Memory
	b    []byte
	n    int // slots held (reserve); 0 is one, with b
	once sync.Once
}

// reuse gives the slot back with its buffer, which nothing refers to.
func (s *slot) reuse() {
	if s != nil {
		s.once.Do(func() { s.m.give(s.b) })
	}
}

// keep gives the slot back without its buffer, which the caller keeps.
func (s *slot) keep() {
	if s != nil {
		s.once.Do(func() {
			for range max(s.n, 1) {
				s.m.give(nil)
			}
		})
	}
}

// DecodedBudget counts what one read of one transcript has decoded.
type DecodedBudget struct {
	Limit int64
	Used  int64 // decoded bytes counted so far
}

// admit refuses, before decoding, a frame known to decode to at least lo
// bytes when that would pass the budget (a frame over the read limit gets
// its own error).
func (b *DecodedBudget) admit(lo int64) error {
	if b == nil || lo > b.Limit {
		return nil
	}
	if b.Used+lo > decodedPerRead(b.Limit) {
		return b.exceeded()
	}
	return nil
}

// spend counts n decoded bytes, failing past the budget.
func (b *DecodedBudget) spend(n int) error {
	if b == nil {
		return nil
	}
	b.Used += int64(n)
	if b.Used > decodedPerRead(b.Limit) {
		return b.exceeded()
	}
	return nil
}

func (b *DecodedBudget) exceeded() error {
	return Limitf(b.Limit, "the zstd log decodes to more than %s in one read (%d × the read limit)",
		sizeString(decodedPerRead(b.Limit)), DecodedPerReadFactor)
}
