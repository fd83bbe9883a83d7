package transcript

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
func decodeBuf(mem DecodeMemory, dst []byte, hi, limit int64, held bool) ([]byte, Slot) {
	need := min(hi, limit+overshoot)
	switch {
	case int64(cap(dst)) >= need:
		return dst[:0], nil
	case need <= smallDecode && dst == nil:
		return nil, nil
	case need <= smallDecode || mem == nil || held:
		return make([]byte, 0, need), nil
	}
	return mem.Buffer(need)
}

// DecodeMemory is the process-wide decode memory budget of one read limit:
// every decode buffer over smallDecode bytes is taken from it before it is
// allocated, so that concurrent reads of compressed bombs wait instead of
// each allocating a limit-sized buffer.
type DecodeMemory interface {
	// Buffer waits for a slot and returns it with a buffer of at least
	// need bytes of capacity.
	Buffer(need int64) ([]byte, Slot)
	// ReserveOne waits for a slot for a buffer the caller allocates.
	ReserveOne() Slot
	// ReserveAll waits for every slot at once.
	ReserveAll() Slot
}

// Slot is memory taken from a DecodeMemory, given back by Reuse (with its
// buffer, which nothing refers to any more) or Keep (the caller keeps it).
type Slot interface {
	Reuse()
	Keep()
}

// reuse gives s back with its buffer (nil: a buffer outside the budget).
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

// Admit refuses, before decoding, a frame known to decode to at least lo
// bytes when that would pass the budget (a frame over the read limit gets
// its own error).
func (b *DecodedBudget) Admit(lo int64) error {
	if b == nil || lo > b.Limit {
		return nil
	}
	if b.Used+lo > decodedPerRead(b.Limit) {
		return b.exceeded()
	}
	return nil
}

// Spend counts n decoded bytes, failing past the budget.
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
