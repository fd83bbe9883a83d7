package sessionstore

import "sync"

// Buffers of the fold's readers (index_log.go): a transcript is read in
// chunks of up to readChunk bytes into a recycled buffer, and complete
// zstd frames decode into a recycled buffer, so the first index pass
// allocates per session about what it keeps, not what it reads.

const readChunk = 4 << 20

var readBufs = sync.Pool{New: func() any { b := make([]byte, readChunk); return &b }}

// getReadBuf returns a recycled read buffer of readChunk bytes.
func getReadBuf() *[]byte { return readBufs.Get().(*[]byte) }

// putReadBuf recycles b unless it grew (a long line or frame).
func putReadBuf(b *[]byte) {
	if cap(*b) == readChunk {
		*b = (*b)[:readChunk]
		readBufs.Put(b)
	}
}

var textBufs = sync.Pool{New: func() any { b := make([]byte, 0, 256<<10); return &b }}

// decodeFrameInto is decodeFrameLimit decoding into dst's storage when it
// is large enough for the frame's block-header bound (the caller owns the
// result until it reuses dst). A frame over the limit is refused before
// decoding; errors are decodeFrameLimit's own.
func decodeFrameInto(frame, dst []byte, limit int64) ([]byte, error) {
	lo, hi := frameContentBounds(frame)
	if lo > limit {
		return decodeFrameLimit(frame, limit)
	}
	if need := min(hi, limit+overshoot); int64(cap(dst)) < need {
		dst = make([]byte, 0, need)
	}
	out, err := decodeAll(limit, frame, dst[:0])
	if err != nil {
		// Mapped as decodeFrameLimit maps it, without a second decode
		// (a bomb would be decoded to the limit twice).
		return nil, frameDecodeErr(err, limit)
	}
	return out, nil
}

// putTextBuf recycles a decode buffer unless a huge frame grew it.
func putTextBuf(b *[]byte) {
	if cap(*b) <= readChunk {
		textBufs.Put(b)
	}
}
