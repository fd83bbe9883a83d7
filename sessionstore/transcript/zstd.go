package transcript

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"
)

const zstdMagic = 0xFD2FB528

// frameHeader returns the offset of the first block of the frame at
// data[0] (RFC 8878 §3.1.1: magic, descriptor, window descriptor unless
// single-segment, dictionary id, content size) and the content size it
// declares, -1 when none (or cut off).
func frameHeader(data []byte) (blocks int, declared int64) {
	fhd := data[4]
	single := fhd&0x20 != 0
	n := [4]int{0, 2, 4, 8}[fhd>>6]
	if fhd>>6 == 0 && single {
		n = 1
	}
	p := 5 + [4]int{0, 1, 2, 4}[fhd&3]
	if !single {
		p++
	}
	if n == 0 || p+n > len(data) {
		return p + n, -1
	}
	var v uint64
	for i := n - 1; i >= 0; i-- {
		v = v<<8 | uint64(data[p+i])
	}
	if n == 2 {
		v += 256
	}
	if v >= 1<<62 {
		return p + n, -1
	}
	return p + n, int64(v)
}

// frameEnd returns the end of the frame starting at data[off]; complete
// is false when the data runs out inside it. base is the file offset of
// data[0] (the offsets in its errors are file offsets).
func frameEnd(data []byte, off int, base int64) (end int, complete bool, err error) {
	p := off
	if len(data)-p < 5 {
		if len(data)-p >= 4 && binary.LittleEndian.Uint32(data[p:]) != zstdMagic {
			return 0, false, backendf("invalid frame magic at offset %d", base+int64(p))
		}
		return 0, false, nil
	}
	if binary.LittleEndian.Uint32(data[p:]) != zstdMagic {
		return 0, false, backendf("invalid frame magic at offset %d", base+int64(p))
	}
	fhd := data[p+4]
	if fhd&0x18 != 0 {
		return 0, false, backendf("invalid frame header descriptor at offset %d", base+int64(p+4))
	}
	first, _ := frameHeader(data[p:])
	for p += first; ; {
		b, ok := nextBlock(data, p)
		switch {
		case ok && b.typ == blockReserved:
			return 0, false, backendf("reserved zstd block type at offset %d", base+int64(p))
		case !ok || !b.whole:
			return 0, false, nil
		}
		p = b.next
		if b.last {
			break
		}
	}
	if fhd&0x04 != 0 { // content checksum
		p += 4
	}
	if p > len(data) {
		return 0, false, nil
	}
	return p, true, nil
}

// Block types of the zstd format.
const (
	blockRaw = iota
	blockRLE
	blockCompressed
	blockReserved
)

// block is one block header of a zstd frame.
type block struct {
	typ uint32
	// size is the Block_Size field: the decoded size of a raw or RLE
	// block, the stored size of a compressed one.
	size int
	last bool
	// next is the offset after the block's stored bytes; whole says data
	// holds them all.
	next  int
	whole bool
}

// nextBlock reads the block header at data[p]; ok is false when fewer than
// its 3 bytes remain.
func nextBlock(data []byte, p int) (b block, ok bool) {
	if len(data)-p < 3 {
		return block{}, false
	}
	bh := uint32(data[p]) | uint32(data[p+1])<<8 | uint32(data[p+2])<<16
	b = block{typ: (bh >> 1) & 3, size: int(bh >> 3), last: bh&1 != 0}
	stored := b.size
	if b.typ == blockRLE {
		stored = 1
	}
	b.next = p + 3 + stored
	b.whole = b.next <= len(data)
	return b, true
}

// DefaultReadLimit is the default read limit (Options.Limit): the most
// decoded bytes one zstd frame or one raw line may hold. A session over it fails to read with an
// error matching ErrReadLimit; the others are unaffected.
const DefaultReadLimit int64 = 128 << 20

// MinReadLimit is the smallest accepted read limit: the decoder refuses
// a frame whose declared window exceeds the limit, and encoders use
// windows of up to 8 MiB (the format's recommended decoder minimum).
const MinReadLimit int64 = 16 << 20

// maxWindow is the largest zstd window the decoder accepts (the format's
// own maximum on 64-bit hosts is larger, but dsh's encoder never uses
// more than a few MiB).
const maxWindow = 1 << 30

// decoders holds one shared decoder per decoded-size limit (DecodeAll is
// safe for concurrent use; there are only ever a few limits).
var decoders sync.Map // int64 → *zstd.Decoder

// decoderFor returns the shared decoder whose output per frame is capped
// at limit decoded bytes. The cap is checked against the frame's declared
// content size before any output is allocated and after every block
// (≤ 128 KiB) while decoding, so a frame of RLE blocks cannot run past it.
func decoderFor(limit int64) *zstd.Decoder {
	if d, ok := decoders.Load(limit); ok {
		return d.(*zstd.Decoder)
	}
	win := uint64(min(max(limit, zstd.MinWindowSize), maxWindow))
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0),
		zstd.WithDecoderMaxMemory(uint64(limit)), zstd.WithDecoderMaxWindow(win))
	if err != nil {
		panic("transcript: zstd decoder options: " + err.Error()) // options are constants
	}
	if prev, loaded := decoders.LoadOrStore(limit, d); loaded {
		d.Close()
		return prev.(*zstd.Decoder)
	}
	return d
}

// isSizeErr reports a decode refused for its decoded or window size.
func isSizeErr(err error) bool {
	return errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded)
}

// overshoot is how far past the limit the output buffer reaches: the
// decoder checks the limit after each block (≤ 128 KiB, plus its
// over-allocation), so the block that crosses it still fits and the
// buffer is never regrown (which would hold two copies).
const overshoot = 256 << 10

// decodeAll is the limit's decoder's DecodeAll into dst. Callers size dst
// with decodeBuf, which reserves large buffers from the decode memory
// budget before allocating them (decode_budget.go).
func decodeAll(limit int64, frame, dst []byte) ([]byte, error) {
	out, err := decoderFor(limit).DecodeAll(frame, dst)
	DecodedBytes.Add(int64(len(out)))
	return out, err
}

// zstdDecoded counts the bytes every event-frame decode produced (the
// tests' deterministic measure of decoding work).
var DecodedBytes atomic.Int64

// frameContentBounds bounds the decoded size of the (possibly torn) frame
// at the start of data from its block headers alone, without decoding:
// raw and RLE blocks give their exact size, a compressed block at most
// 128 KiB; a block cut off by the end of data counts nothing. A frame that
// declares its content size is bounded by it. lo > limit refuses a frame
// of RLE or raw blocks (the bombs) before any output is allocated, and hi
// sizes the output buffer once (no growth, no garbage).
func frameContentBounds(data []byte) (lo, hi int64) {
	if len(data) < 6 || binary.LittleEndian.Uint32(data) != zstdMagic {
		return 0, maxBlockSize
	}
	first, declared := frameHeader(data)
	for p := first; ; {
		b, ok := nextBlock(data, p)
		if ok && b.typ == blockReserved {
			return lo, hi
		}
		if !ok || !b.whole { // a block cut off decodes to nothing yet
			break
		}
		if b.typ == blockCompressed {
			hi += maxBlockSize
		} else {
			lo += int64(b.size)
			hi += int64(b.size)
		}
		if p = b.next; b.last {
			break
		}
	}
	if declared >= 0 {
		hi = min(hi, declared)
	}
	return lo, max(hi, 0)
}

// decodeFrame decompresses one complete frame of at most limit decoded
// bytes into dst's storage when it is large enough for the frame's
// block-header bound. A larger output buffer comes from the decode memory
// budget, taken before it is allocated: the caller owns the result until
// it gives the slot back (reuse(sl), after which nothing may refer to the
// text, or keep(sl); a nil slot is fine). A frame over the limit, or one
// whose raw and RLE blocks alone pass the read's decoded-bytes budget b
// (nil: none), is refused before decoding; a frame holding a block larger
// than the format allows is corruption.
//
// held says the caller already holds every slot of the budget (a frame
// whose compressed bytes grew its read buffer): the output buffer is then
// allocated within them, without taking another.
func decodeFrame(mem DecodeMemory, frame, dst []byte, limit int64, b *DecodedBudget, held bool) (out []byte, sl Slot, err error) {
	lo, hi := frameContentBounds(frame)
	if lo > limit {
		if e := oversizedBlockErr(frame); e != nil {
			return nil, nil, e
		}
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
		// Nothing refers to the buffer: a store of bombs reuses the same
		// buffers.
		reuse(sl)
		return nil, nil, frameDecodeErr(frame, err, limit)
	}
	if err := b.Spend(len(out)); err != nil {
		reuse(sl)
		return nil, nil, err
	}
	return out, sl, nil
}

// frameDecodeErr is the error of a complete frame that failed to decode:
// corruption for a block larger than the format allows (which the decoder
// refuses as a window-size excess), a read-limit error for a size
// refusal, else corruption.
func frameDecodeErr(frame []byte, err error, limit int64) error {
	if e := oversizedBlockErr(frame); e != nil {
		return e
	}
	if isSizeErr(err) {
		return Limitf(limit, "a zstd frame decodes to (or declares a window of) more bytes than the read limit")
	}
	return &Error{Kind: KindCorrupt, Msg: "zstd frame does not decode", Err: err, Backend: true}
}

// decodeTornFrame decodes a torn final frame and returns the plaintext of
// its blocks that arrived whole (no checksum: it was never written).
// Truncation is not an error; a frame whose declared size, window or
// decoded blocks exceed limit fails with a read-limit error, so a torn
// frame of RLE blocks costs at most limit bytes.
func decodeTornFrame(mem DecodeMemory, frame []byte, limit int64) ([]byte, error) {
	lo, hi := frameContentBounds(frame)
	if lo > limit {
		return nil, Limitf(limit, "the torn final zstd frame decodes to more bytes than the read limit")
	}
	dst, sl := decodeBuf(mem, nil, hi, limit)
	out, err := decodeAll(limit, frame, dst)
	if err != nil && isSizeErr(err) {
		reuse(sl)
		if e := oversizedBlockErr(frame); e != nil {
			return nil, e
		}
		return nil, Limitf(limit, "the torn final zstd frame decodes to more bytes than the read limit")
	}
	keep(sl)
	return out, nil
}

// headerDecoder decodes header frames into a caller-sized buffer
// (WithDecodeAllCapLimit): the output, not the declared window, is what
// is bounded, so a header frame of an encoder with a large window still
// decodes while a bomb stops after maxHeaderBytes.
var headerDecoder = sync.OnceValue(func() *zstd.Decoder {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecodeAllCapLimit(true),
		zstd.WithDecoderMaxWindow(maxWindow))
	if err != nil {
		panic("transcript: zstd decoder options: " + err.Error())
	}
	return d
})

// headerBufs recycles the header decoder's output buffers.
var headerBufs = sync.Pool{New: func() any { b := make([]byte, 0, maxHeaderBytes+1); return &b }}

// decodeHeaderFrame decodes a header frame of at most maxHeaderBytes
// decoded bytes; a larger one fails with a read-limit error.
func decodeHeaderFrame(frame []byte) ([]byte, error) {
	bp := headerBufs.Get().(*[]byte)
	defer headerBufs.Put(bp)
	out, err := headerDecoder().DecodeAll(frame, (*bp)[:0])
	if err == nil && len(out) > maxHeaderBytes {
		err = zstd.ErrDecoderSizeExceeded
	}
	if err != nil {
		if e := oversizedBlockErr(frame); e != nil {
			return nil, e
		}
		// The decoder stops a frame that does not declare its size when
		// the output reaches the buffer's capacity, with the same error
		// as a corrupt block: tell them apart by decoding again, as a
		// stream, up to one byte past the limit.
		if isSizeErr(err) || headerPastLimit(frame) {
			return nil, &Error{Kind: KindIO, Backend: true, Err: ErrReadLimit,
				Msg: "the header frame decodes to more bytes than the header limit (" + sizeString(maxHeaderBytes) +
					"; a session header is one short line, and this limit does not change with the read limit)"}
		}
		return nil, &Error{Kind: KindCorrupt, Msg: "zstd frame does not decode", Err: err, Backend: true}
	}
	return append([]byte(nil), out...), nil
}

// headerPastLimit reports whether the header frame decodes to more than
// maxHeaderBytes, decoding it as a stream (bounded memory: a window of at
// most headerProbeWindow) into nothing.
func headerPastLimit(frame []byte) bool {
	d, err := zstd.NewReader(bytes.NewReader(frame), zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(headerProbeWindow), zstd.IgnoreChecksum(true))
	if err != nil {
		return false
	}
	defer d.Close()
	n, _ := io.CopyN(io.Discard, d, maxHeaderBytes+1)
	return n > maxHeaderBytes
}

// headerProbeWindow bounds the window headerPastLimit decodes with: zstd
// encoders use at most 8 MiB at their default levels.
const headerProbeWindow = 8 << 20

// maxBlockSize is the largest block the zstd format allows.
const maxBlockSize = 128 << 10

// oversizedBlockErr reports, as corruption, a frame holding a block larger
// than the format allows: the decoder refuses it as a window-size excess,
// which would otherwise read as the read limit (that no limit helps). It
// returns nil for any other frame.
func oversizedBlockErr(data []byte) error {
	if len(data) < 6 || binary.LittleEndian.Uint32(data) != zstdMagic {
		return nil
	}
	for p, _ := frameHeader(data); ; {
		b, ok := nextBlock(data, p)
		if !ok || b.typ == blockReserved {
			return nil // a reserved block: the decoder's own error says so
		}
		if b.size > maxBlockSize {
			return &Error{Kind: KindCorrupt, Backend: true,
				Msg: fmt.Sprintf("a zstd block of %d bytes is larger than the format's maximum of %d bytes (the frame is malformed; no read limit helps)", b.size, maxBlockSize)}
		}
		if !b.whole || b.last {
			return nil
		}
		p = b.next
	}
}

// growBuf returns the full buf copied into a buffer twice as long, or
// ceil bytes long when that is shorter or nearly reached: one exact
// allocation (append would over-allocate past the limit) and no small
// last step that would hold two near-limit copies at once.
func growBuf(buf []byte, ceil int64) []byte {
	n := int64(len(buf)) * 2
	if n > ceil-ceil/4 {
		n = ceil
	}
	nb := make([]byte, max(n, int64(len(buf))))
	copy(nb, buf)
	return nb
}
