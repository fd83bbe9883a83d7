package sessionstore

import (
	"bytes"
	"encoding/binary"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
)

const zstdMagic = 0xFD2FB528

// frameSpan is one zstd frame [Start, End) in the file.
type frameSpan struct{ Start, End int }

// scanFrames finds the frame boundaries of a concatenation of zstd frames
// without decompressing (dsh scanZstdFrames, spec §3.2). torn is the start
// of an incomplete final frame, or -1.
func scanFrames(data []byte) (frames []frameSpan, torn int, err error) {
	off := 0
	for off < len(data) {
		end, complete, err := FrameEnd(data, off)
		if err != nil {
			return nil, 0, err
		}
		if !complete {
			return frames, off, nil
		}
		frames = append(frames, frameSpan{off, end})
		off = end
	}
	return frames, -1, nil
}

// FrameEnd returns the end of the frame starting at off; complete is false
// when the data runs out inside it.
func FrameEnd(data []byte, off int) (end int, complete bool, err error) {
	return frameEndBase(data, off, 0)
}

// frameEndBase is FrameEnd for data that starts at file offset base (the
// offsets in its errors are file offsets).
func frameEndBase(data []byte, off int, base int64) (end int, complete bool, err error) {
	p := off
	if len(data)-p < 4 {
		return 0, false, nil
	}
	if binary.LittleEndian.Uint32(data[p:]) != zstdMagic {
		return 0, false, backendf("invalid frame magic at offset %d", base+int64(p))
	}
	p += 4
	if p >= len(data) {
		return 0, false, nil
	}
	fhd := data[p]
	p++
	if fhd&0x18 != 0 {
		return 0, false, backendf("invalid frame header descriptor at offset %d", base+int64(p-1))
	}
	single := fhd&0x20 != 0
	fcsLen := [4]int{0, 2, 4, 8}[fhd>>6]
	if fhd>>6 == 0 && single {
		fcsLen = 1
	}
	if !single {
		p++ // window descriptor
	}
	p += [4]int{0, 1, 2, 4}[fhd&3] + fcsLen
	checksum := fhd&0x04 != 0
	for {
		if len(data)-p < 3 {
			return 0, false, nil
		}
		bh := uint32(data[p]) | uint32(data[p+1])<<8 | uint32(data[p+2])<<16
		p += 3
		last := bh&1 != 0
		typ := (bh >> 1) & 3
		size := int(bh >> 3)
		if typ == 3 {
			return 0, false, backendf("reserved zstd block type at offset %d", base+int64(p-3))
		}
		if typ == 1 { // RLE
			size = 1
		}
		if len(data)-p < size {
			return 0, false, nil
		}
		p += size
		if last {
			break
		}
	}
	if checksum {
		if len(data)-p < 4 {
			return 0, false, nil
		}
		p += 4
	}
	return p, true, nil
}

var (
	decoderOnce sync.Once
	decoder     *zstd.Decoder
)

// maxFrameMemory bounds the decoded size of one frame.
const maxFrameMemory = 1 << 30

func sharedDecoder() *zstd.Decoder {
	decoderOnce.Do(func() {
		// DecodeAll is safe for concurrent use; concurrency 0 = GOMAXPROCS.
		decoder, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxFrameMemory))
	})
	return decoder
}

// DecodeFrame decompresses one complete frame and verifies its checksum.
func DecodeFrame(frame []byte) ([]byte, error) {
	out, err := sharedDecoder().DecodeAll(frame, nil)
	if err != nil {
		return nil, &logError{kind: KindCorrupt, msg: "zstd frame does not decode", err: err, backend: true}
	}
	return out, nil
}

// streamDecoders are reused for torn final frames (creating a decoder
// allocates its window buffers).
var streamDecoders = sync.Pool{New: func() any {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxFrameMemory), zstd.IgnoreChecksum(true))
	if err != nil {
		return nil
	}
	return d
}}

// decodePartialFrame stream-decodes a torn final frame and returns the
// plaintext produced before the data ran out (no checksum).
func decodePartialFrame(frame []byte) []byte {
	d, _ := streamDecoders.Get().(*zstd.Decoder)
	if d == nil {
		return nil
	}
	defer streamDecoders.Put(d)
	if err := d.Reset(bytes.NewReader(frame)); err != nil {
		return nil
	}
	var buf bytes.Buffer
	_, _ = io.Copy(&buf, d)
	return buf.Bytes()
}

// ScanZstd scans a zstd transcript (spec §3.2).
func ScanZstd(data []byte) (*ScannedLog, error) {
	frames, torn, err := scanFrames(data)
	if err != nil {
		return nil, err
	}
	if len(frames) == 0 {
		return nil, backendf("empty or header-less Zstandard session log")
	}
	first, err := DecodeFrame(data[frames[0].Start:frames[0].End])
	if err != nil {
		return nil, err
	}
	if len(first) == 0 || bytes.IndexByte(first, '\n') != len(first)-1 {
		return nil, backendf("first zstd frame is not exactly one header line")
	}
	h, err := parseHeaderLine(first[:len(first)-1])
	if err != nil {
		return nil, err
	}
	logical := int64(len(first))
	s := &LineScanner{Strict: true, GoodEnd: logical}
	for i, f := range frames[1:] {
		text, err := DecodeFrame(data[f.Start:f.End])
		if err != nil {
			return nil, err
		}
		if len(text) == 0 || text[len(text)-1] != '\n' {
			return nil, backendf("complete frame %d contains a torn JSONL record", i+2)
		}
		if _, err := s.feedLines(text, logical); err != nil {
			return nil, markBackend(err)
		}
		logical += int64(len(text))
	}
	out := &ScannedLog{Header: h, HeaderLine: first[:len(first)-1], Frames: len(frames), Offset: int64(frames[len(frames)-1].End)}
	if torn >= 0 {
		text := decodePartialFrame(data[torn:])
		s.Strict = false
		partial, err := s.feedLines(text, logical)
		if err != nil {
			return nil, markBackend(err)
		}
		_ = partial
		logical += int64(len(text))
	}
	out.Events = s.events
	out.TornBytes = logical - s.GoodEnd
	return out, nil
}

// Unexported names kept for the index code.
func frameEnd(data []byte, off int) (int, bool, error) { return FrameEnd(data, off) }
func decodeFrame(frame []byte) ([]byte, error)         { return DecodeFrame(frame) }
