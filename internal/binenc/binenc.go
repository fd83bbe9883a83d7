// Package binenc is the varint encoding of the index's persisted records:
// append helpers that write, and a Reader that reads them back with every
// length checked against what is left, so that corrupt or hostile bytes
// give an error, never a panic or an allocation larger than the input.
package binenc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unsafe"
)

// ErrCorrupt is the error of a Reader that ran past its input or read a
// value out of range.
var ErrCorrupt = errors.New("corrupt encoded record")

// AppendUint appends v as a uvarint.
func AppendUint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

// AppendInt appends v as a zig-zag varint.
func AppendInt(b []byte, v int64) []byte { return binary.AppendVarint(b, v) }

// AppendBool appends v as one byte.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// AppendBytes appends v's length and bytes.
func AppendBytes(b, v []byte) []byte { return append(AppendUint(b, uint64(len(v))), v...) }

// AppendString appends v's length and bytes.
func AppendString(b []byte, v string) []byte { return append(AppendUint(b, uint64(len(v))), v...) }

// AppendOptBytes appends v with a presence byte: nil and empty stay apart.
func AppendOptBytes(b, v []byte) []byte {
	if v == nil {
		return append(b, 0)
	}
	return AppendBytes(append(b, 1), v)
}

// Reader reads what the Append functions wrote. The first failure sticks:
// later reads return zero values and Err reports it.
type Reader struct {
	b   []byte
	err error
}

// NewReader reads b. Byte slices it returns alias b.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Err returns the first failure, nil when every read succeeded.
func (r *Reader) Err() error { return r.err }

// Len returns the bytes left.
func (r *Reader) Len() int { return len(r.b) }

func (r *Reader) fail() {
	if r.err == nil {
		r.err = ErrCorrupt
	}
	r.b = nil
}

// Uint reads a uvarint.
func (r *Reader) Uint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

// Int reads a zig-zag varint.
func (r *Reader) Int() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

// Uint32 reads a uvarint that must fit 32 bits.
func (r *Reader) Uint32() uint32 {
	v := r.Uint()
	if v > math.MaxUint32 {
		r.fail()
		return 0
	}
	return uint32(v)
}

// Count reads a length or element count: each element takes at least
// minSize bytes of what is left, which bounds what a caller allocates.
func (r *Reader) Count(minSize int) int {
	v := r.Uint()
	if v > uint64(len(r.b)/max(minSize, 1)) {
		r.fail()
		return 0
	}
	return int(v)
}

// Bool reads one byte that must be 0 or 1.
func (r *Reader) Bool() bool {
	if len(r.b) == 0 || r.b[0] > 1 {
		r.fail()
		return false
	}
	v := r.b[0] == 1
	r.b = r.b[1:]
	return v
}

// Bytes reads a length and that many bytes (aliasing the input; empty, not
// nil, when the length is 0).
func (r *Reader) Bytes() []byte {
	n := r.Count(1)
	if r.err != nil {
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

// String reads a length and that many bytes as a string (a copy).
func (r *Reader) String() string { return string(r.Bytes()) }

// StringAlias is String without the copy: the string shares the input's
// bytes, which must then never be modified (a decoder that keeps the
// input whole anyway saves an allocation per string).
func (r *Reader) StringAlias() string { return Alias(r.Bytes()) }

// Alias is the string of b's bytes without the copy: b must then never be
// modified.
func Alias(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// OptBytes reads what AppendOptBytes wrote.
func (r *Reader) OptBytes() []byte {
	if !r.Bool() {
		return nil
	}
	return r.Bytes()
}

// Failf records a failure the caller found in what it read (a value out
// of range); like a read's, the first one sticks.
func (r *Reader) Failf(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
	r.b = nil
}

// Uint32LE reads 4 bytes, little-endian.
func (r *Reader) Uint32LE() uint32 {
	if b := r.Fixed(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

// Fixed reads n bytes (aliasing the input).
func (r *Reader) Fixed(n int) []byte {
	if n < 0 || n > len(r.b) {
		r.fail()
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}
