package transcript

import "sync"

// Buffers of the fold's readers (index_log.go): a transcript is read in
// chunks of up to readChunk bytes into a recycled buffer, and complete
// zstd frames decode into a recycled buffer, so the first index pass
// allocates per session about what it keeps, not what it reads.

const readChunk = 4 << 20

var readBufs = sync.Pool{New: func() any { b := make([]byte, readChunk); return &b }}

// getReadBuf returns a recycled read buffer of readChunk bytes.
func GetReadBuf() *[]byte { return readBufs.Get().(*[]byte) }

// putReadBuf recycles b unless it grew (a long line or frame).
func PutReadBuf(b *[]byte) {
	if cap(*b) == readChunk {
		*b = (*b)[:readChunk]
		readBufs.Put(b)
	}
}

var TextBufs = sync.Pool{New: func() any { b := make([]byte, 0, 256<<10); return &b }}

// decodeFrameInto is decodeFrameLimit decoding into dst's storage when it
// is large enough for the frame's block-header bound. A larger output
// buffer comes from the decode memory budget, taken before it is
// allocated: the caller owns the result until it gives the slot back with
// reuse(sl) (a nil slot is fine), after which nothing may refer to the
// text. A frame over the limit, or one whose raw and RLE blocks alone
// pass the read's decoded-bytes budget b, is refused before decoding;
// errors are decodeFrameLimit's own.
//
// held says the caller already holds every slot of the budget (a frame
// whose compressed bytes grew its read buffer): the output buffer is then
// allocated within them, without taking another.
func DecodeFrameInto(mem DecodeMemory, frame, dst []byte, limit int64, b *DecodedBudget, held bool) (out []byte, sl Slot, err error) {
	lo, hi := FrameContentBounds(frame)
	if lo > limit {
		return nil, nil, Limitf(limit, "a zstd frame decodes to more bytes than the read limit")
	}
	if err := b.Admit(lo); err != nil {
		return nil, nil, err
	}
	if need := min(hi, limit+overshoot); held && int64(cap(dst)) < need {
		dst = make([]byte, 0, need)
	} else {
		dst, sl = decodeBuf(mem, dst, hi, limit)
	}
	out, err = decodeAll(limit, frame, dst)
	if err != nil {
		Reuse(sl)
		// Mapped as decodeFrameLimit maps it, without a second decode
		// (a bomb would be decoded to the limit twice).
		return nil, nil, frameDecodeErr(err, limit)
	}
	if err := b.Spend(len(out)); err != nil {
		Reuse(sl)
		return nil, nil, err
	}
	return out, sl, nil
}

// putTextBuf recycles a decode buffer unless a huge frame grew it.
func PutTextBuf(b *[]byte) {
	if cap(*b) <= readChunk {
		TextBufs.Put(b)
	}
}
