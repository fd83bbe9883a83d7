package transcript

import (
	"bytes"
	"errors"
	"io"
	"math"
)

// ErrNoHeaderYet is a header not complete yet (a session being created).
var ErrNoHeaderYet = errors.New("session header not written yet")

// maxHeaderBytes bounds a header line or frame, compressed and decoded.
const maxHeaderBytes = 1 << 20

// ReadHeader reads only the header of the transcript r holds (spec §1.3),
// reading and decoding at most maxHeaderBytes, and checks its shape.
func ReadHeader(r io.ReaderAt, framing Framing) (*Header, error) {
	in := input{r: r, size: math.MaxInt64, buf: make([]byte, 4096)}
	grow := func() error {
		if len(in.buf) > maxHeaderBytes {
			return Corruptf("no header within the first %d bytes", maxHeaderBytes)
		}
		in.setBuf(append(in.buf, make([]byte, min(len(in.buf), maxHeaderBytes+1-len(in.buf)))...))
		return nil
	}
	var line []byte
	var err error
	if framing == Lines {
		line, _, err = in.line(grow)
	} else {
		var frame []byte
		if frame, _, err = in.frame(grow); err == nil {
			line, err = headerFrameLine(frame)
		}
	}
	var te *Error
	switch {
	case err == io.EOF:
		return nil, ErrNoHeaderYet
	case errors.As(err, &te):
		return nil, err
	case err != nil:
		return nil, &Error{Kind: KindIO, Msg: "cannot read transcript header", Err: err}
	}
	return ParseHeader(line)
}

// headerFrameLine decodes a header frame: exactly one line.
func headerFrameLine(frame []byte) ([]byte, error) {
	text, err := decodeHeaderFrame(frame)
	if err != nil {
		return nil, err
	}
	if len(text) == 0 || bytes.IndexByte(text, '\n') != len(text)-1 {
		return nil, backendf("first zstd frame is not exactly one header line")
	}
	return text[:len(text)-1], nil
}
