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
// data[0] (RFC 8878 §3.1.1) and its declared content size (-1: none).
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

// frameEnd returns the end of the frame at data[off]; complete is false
// when the data runs out inside it. base is data[0]'s file offset.
func frameEnd(data []byte, off int, base int64) (end int, complete bool, err error) {
	p := off
	if len(data)-p >= 4 && binary.LittleEndian.Uint32(data[p:]) != zstdMagic {
		return 0, false, backendf("invalid frame magic at offset %d", base+int64(p))
	}
	if len(data)-p < 5 {
		return 0, false, nil
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

// block is one block header of a zstd frame: size is the decoded size of
// a raw or RLE block, the stored size of a compressed one; next is the
// offset after its stored bytes, which data holds whole.
type block struct {
	typ   uint32
	size  int
	last  bool
	next  int
	whole bool
}

// nextBlock reads the block header at data[p]; ok is false when cut off.
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

// DefaultReadLimit is the default read limit: the most decoded bytes of
// one zstd frame or raw line; a session over it fails with ErrReadLimit.
const DefaultReadLimit int64 = 128 << 20

// MinReadLimit is the smallest accepted read limit: the decoder refuses a
// window over the limit, and encoders use windows of up to 8 MiB.
const MinReadLimit int64 = 16 << 20

// maxWindow is the largest zstd window the decoder accepts.
const maxWindow = 1 << 30

// decoders holds one shared decoder per read limit.
var decoders sync.Map // int64 → *zstd.Decoder

// decoderFor returns the shared decoder whose output per frame is capped
// at limit bytes, checked before allocating and after every block.
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

// overshoot is how far past the limit an output buffer reaches, so that
// the block crossing the limit still fits and the buffer never regrows.
const overshoot = 256 << 10

// decodeAll is the limit's decoder's DecodeAll into dst (sized by
// decodeBuf).
func decodeAll(limit int64, frame, dst []byte) ([]byte, error) {
	out, err := decoderFor(limit).DecodeAll(frame, dst)
	DecodedBytes.Add(int64(len(out)))
	return out, err
}

// DecodedBytes counts the bytes every event-frame decode produced.
var DecodedBytes atomic.Int64

// frameContentBounds bounds the decoded size of the (possibly torn) frame
// at data[0] from its whole blocks' headers: lo refuses a frame of RLE or
// raw blocks (the bombs) before decoding, hi sizes the output buffer once.
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

// decodeFrame decompresses one complete frame of at most limit bytes into
// dst when large enough, else into a buffer of the memory budget whose
// slot sl the caller gives back (reuse or keep). A frame over the limit or
// the read's budget b (nil: none) is refused before decoding. held says
// the caller holds every slot already (its read buffer grew for the frame).
func decodeFrame(mem *Memory, frame, dst []byte, limit int64, b *DecodedBudget, held bool) (out []byte, sl *slot, err error) {
	lo, hi := frameContentBounds(frame)
	if lo > limit {
		if e := oversizedBlockErr(frame); e != nil {
			return nil, nil, e
		}
		return nil, nil, Limitf(limit, "a zstd frame decodes to more bytes than the read limit")
	}
	if err := b.admit(lo); err != nil {
		return nil, nil, err
	}
	dst, sl = decodeBuf(mem, dst, hi, limit, held)
	out, err = decodeAll(limit, frame, dst)
	if err != nil {
		sl.reuse()
		return nil, nil, frameDecodeErr(frame, err, limit)
	}
	if err := b.spend(len(out)); err != nil {
		sl.reuse()
		return nil, nil, err
	}
	return out, sl, nil
}

// frameDecodeErr is the error of a complete frame that failed to decode.
func frameDecodeErr(frame []byte, err error, limit int64) error {
	if e := oversizedBlockErr(frame); e != nil {
		return e
	}
	if isSizeErr(err) {
		return Limitf(limit, "a zstd frame decodes to (or declares a window of) more bytes than the read limit")
	}
	return &Error{Kind: KindCorrupt, Msg: "zstd frame does not decode", Err: err, Backend: true}
}

// decodeTornFrame returns the plaintext of a torn final frame's whole
// blocks; only a size over limit is an error. held is decodeFrame's.
func decodeTornFrame(mem *Memory, frame []byte, limit int64, held bool) ([]byte, error) {
	lo, hi := frameContentBounds(frame)
	if lo > limit {
		return nil, Limitf(limit, "the torn final zstd frame decodes to more bytes than the read limit")
	}
	dst, sl := decodeBuf(mem, nil, hi, limit, held)
	out, err := decodeAll(limit, frame, dst)
	if err != nil && isSizeErr(err) {
		sl.reuse()
		if e := oversizedBlockErr(frame); e != nil {
			return nil, e
		}
		return nil, Limitf(limit, "the torn final zstd frame decodes to more bytes than the read limit")
	}
	sl.keep()
	return out, nil
}

// headerDecoder bounds a header frame's output, not its window
// (WithDecodeAllCapLimit), so a large-window encoder's header decodes.
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
		// A full buffer fails like a corrupt block: a streamed decode
		// tells them apart.
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
// maxHeaderBytes, streaming it with a bounded window.
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

// headerProbeWindow is the largest window of zstd's default levels.
const headerProbeWindow = 8 << 20

// maxBlockSize is the largest block the zstd format allows.
const maxBlockSize = 128 << 10

// oversizedBlockErr reports, as corruption, a frame holding a block larger
// than the format allows, which the decoder refuses as a window excess
// that no read limit helps; nil for any other frame.
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

// growBuf returns buf copied into a buffer twice as long, or ceil bytes
// long when that is nearly reached (no small last step).
func growBuf(buf []byte, ceil int64) []byte {
	n := int64(len(buf)) * 2
	if n > ceil-ceil/4 {
		n = ceil
	}
	nb := make([]byte, max(n, int64(len(buf))))
	copy(nb, buf)
	return nb
}
