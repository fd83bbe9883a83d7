package transcript

import (
	"bytes"
	"errors"
	"io"
)

// errNoHeaderYet: the header line/frame is not complete yet (a session
// being created); discovery skips it silently.
var ErrNoHeaderYet = errors.New("session header not written yet")

// maxHeaderBytes bounds the header-only read: the header line (raw), or
// both the compressed and the decoded size of the header frame (zstd).
const maxHeaderBytes = 1 << 20

// ReadHeader reads only a transcript's header (spec §1.3 step 4–5) from
// the start of f, zstd frames when zstd is set, else raw lines. It reads
// and decodes at most maxHeaderBytes (1 MiB) whatever the file holds.
func ReadHeader(f io.Reader, zstd bool) (*Header, error) {
	buf := make([]byte, 0, 4096)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if !zstd {
			if i := bytes.IndexByte(buf, '\n'); i >= 0 {
				h, perr := ParseHeader(buf[:i])
				if perr != nil {
					return nil, perr
				}
				return h, nil
			}
		} else if len(buf) > 0 {
			end, complete, ferr := FrameEnd(buf, 0)
			if ferr != nil {
				return nil, ferr
			}
			if complete {
				text, derr := DecodeHeaderFrame(buf[:end])
				if derr != nil {
					return nil, derr
				}
				if len(text) == 0 || bytes.IndexByte(text, '\n') != len(text)-1 {
					return nil, Backendf("first zstd frame is not exactly one header line")
				}
				return ParseHeader(text[:len(text)-1])
			}
		}
		if err == io.EOF {
			return nil, ErrNoHeaderYet
		}
		if err != nil {
			return nil, &Error{Kind: KindIO, Msg: "cannot read transcript header", Err: err}
		}
		if len(buf) > maxHeaderBytes {
			return nil, Corruptf("no header within the first %d bytes", maxHeaderBytes)
		}
	}
}
