package transcript

import (
	"bytes"
	"io"
)

// surfaceWindowSize is how much of a transcript one read of a surface read
// brings in. Surface records are read in (nearly) file order, so the
// window serves the next records too: reading a record at a time with a
// 64 KiB buffer each (a few hundred bytes to a few KiB per record) would
// copy and zero ~60 times the file's bytes, most of a cold hover's cost.
const surfaceWindowSize = 256 << 10

// fileWindow reads byte ranges of one file, in mostly increasing order,
// through one buffer. Slices it returns alias the buffer until the next
// call that refills it; a refill allocates a new buffer, so bytes already
// returned stay valid.
type window struct {
	r   io.ReaderAt
	off int64  // file offset of buf[0]
	buf []byte // the file's bytes from off
	eof bool   // buf ends at the end of the file
}

// view returns the file's bytes from off: at least need bytes, or fewer
// with atEOF set when the file ends first.
func (w *window) view(off int64, need int) (data []byte, atEOF bool, err error) {
	if w.buf != nil && off >= w.off && off <= w.off+int64(len(w.buf)) {
		rest := w.buf[off-w.off:]
		if len(rest) >= need {
			return rest, false, nil
		}
		if w.eof {
			return rest, true, nil
		}
	}
	buf := make([]byte, max(need, surfaceWindowSize))
	m, err := w.r.ReadAt(buf, off)
	if err != nil && err != io.EOF {
		return nil, false, err
	}
	// ReadAt fills buf unless it fails or meets the end of the file.
	w.off, w.buf, w.eof = off, buf[:m], m < len(buf)
	return w.buf, m < need, nil
}

// frame returns the complete zstd frame starting at off: the frame, or
// the bytes up to EOF and io.ErrUnexpectedEOF for a torn frame; a
// read-limit error for a frame longer than limit plus the decoder's
// overshoot.
func (w *window) frame(off, limit int64) ([]byte, error) {
	maxBytes := limit + overshoot
	need := 1
	for {
		data, atEOF, err := w.view(off, need)
		if err != nil {
			return nil, err
		}
		end, complete, ferr := frameEnd(data, 0, off)
		if ferr != nil {
			return nil, ferr
		}
		if complete {
			return data[:end], nil
		}
		if atEOF {
			return data, io.ErrUnexpectedEOF
		}
		if int64(len(data)) >= maxBytes {
			return nil, Limitf(limit, "a zstd frame holds more bytes than the read limit")
		}
		need = int(min(2*int64(len(data)), maxBytes))
	}
}

// line returns the line starting at off (without its "\n"). A line
// without a "\n" before the end of the file fails with
// io.ErrUnexpectedEOF, one longer than limit with a read-limit error.
func (w *window) line(off, limit int64) ([]byte, error) {
	need := 1
	for {
		data, atEOF, err := w.view(off, need)
		if err != nil {
			return nil, err
		}
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			return data[:i], nil
		}
		if atEOF {
			return nil, io.ErrUnexpectedEOF
		}
		if int64(len(data)) > limit {
			return nil, Limitf(limit, "a line holds more bytes than the read limit")
		}
		need = int(min(2*int64(len(data)), limit+1))
	}
}
