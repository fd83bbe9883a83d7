package transcript

// smallDecode is the largest decode buffer taken outside the memory
// budget: event frames are a few hundred bytes to a few KiB, and each
// worker holds at most one such buffer.
const smallDecode = 1 << 20

// DecodedPerReadFactor times the read limit is the decoded-bytes budget of
// one read: generous for real logs (every frame of a dsh log is one
// batch of events, the surface a read keeps is itself held to the limit)
// and a bounded amount of work for a bomb.
const DecodedPerReadFactor = 8

// decodedPerRead is the decoded-bytes budget of one read.
func decodedPerRead(limit int64) int64 { return DecodedPerReadFactor * limit }

// decodeBuf returns the output buffer for a frame of at most hi decoded
// bytes and its slot: dst when it is large enough; nil for a small frame
// (the decoder sizes it from the input); else a buffer of up to the limit
// plus overshoot from the decode memory budget, taken before anything is
// allocated (the slot is then not nil).
func decodeBuf(mem DecodeMemory, dst []byte, hi, limit int64) ([]byte, Slot) {
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
	if mem == nil {
		return make([]byte, 0, need), nil
	}
	return mem.Buffer(need)
}

// DecodeMemory is the process-wide decode memory budget of one read limit:
// every decode buffer over smallDecode bytes is taken from it before it is
// allocated, so that concurrent reads of a store of compressed bombs wait
// instead of each allocating a limit-sized buffer. nil means no budget
// (a read that is alone by construction, as in the tests).
type DecodeMemory interface {
	// Buffer waits for a slot and returns it with a buffer of at least
	// need bytes of capacity.
	Buffer(need int64) ([]byte, Slot)
	// ReserveOne waits for a slot for a buffer the caller allocates (a
	// long raw line's read buffer).
	ReserveOne() Slot
	// ReserveAll waits for every slot at once (a zstd frame whose
	// compressed bytes grow the read buffer; its decode then uses them).
	ReserveAll() Slot
}

// Slot is memory taken from a DecodeMemory. Exactly one of Reuse (the buffer
// comes back for the next large decode: nothing refers to it any more) and
// Keep (the caller keeps the buffer) gives it back; later calls do nothing.
type Slot interface {
	Reuse()
	Keep()
}

// reuse gives s back with its buffer; a nil Slot (a buffer outside the
// budget) needs nothing.
func reuse(s Slot) {
	if s != nil {
		s.Reuse()
	}
}

// keep gives s back without its buffer.
func keep(s Slot) {
	if s != nil {
		s.Keep()
	}
}

// DecodedBudget counts what one read of one transcript has decoded.
type DecodedBudget struct {
	Limit int64
	Used  int64 // decoded bytes counted so far
}

// Admit refuses a frame known (from its raw and RLE block headers) to
// decode to lo bytes when that would pass the budget, before decoding it.
// A frame over the read limit is left to the frame's own, more precise,
// read-limit error.
func (b *DecodedBudget) Admit(lo int64) error {
	if b == nil || lo > b.Limit {
		return nil
	}
	if b.Used+lo > decodedPerRead(b.Limit) {
		return b.exceeded()
	}
	return nil
}

// Spend counts n decoded bytes; past the budget it returns the read-limit
// error.
func (b *DecodedBudget) Spend(n int) error {
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
