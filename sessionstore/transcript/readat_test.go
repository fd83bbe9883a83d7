package transcript

import (
	"bytes"
	"errors"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// writeTemp writes data to a new file and opens it.
func writeTemp(t *testing.T, data []byte) *os.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestRandomAccessLines: every line the random-access input (ReadAt)
// returns is the file's line at that offset, whatever the order of the
// reads and however the lines straddle its refills; a final line without
// "\n" and a line over the limit fail.
func TestRandomAccessLines(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var data []byte
	var offs []int64
	for _, n := range []int{0, 1, 100, surfaceWindowSize - 150, 10, surfaceWindowSize, surfaceWindowSize + 1, 3 * surfaceWindowSize, 7, 2} {
		offs = append(offs, int64(len(data)))
		line := make([]byte, n)
		for i := range line {
			line[i] = byte('a' + rng.Intn(26))
		}
		data = append(append(data, line...), '\n')
	}
	tornOff := int64(len(data))
	data = append(data, "no newline"...)
	f := writeTemp(t, data)
	orders := map[string][]int64{"increasing": offs, "decreasing": nil, "shuffled": nil}
	for i := len(offs) - 1; i >= 0; i-- {
		orders["decreasing"] = append(orders["decreasing"], offs[i])
	}
	shuffled := append([]int64(nil), offs...)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	orders["shuffled"] = shuffled
	for name, order := range orders {
		t.Run(name, func(t *testing.T) {
			w := NewCursor(f, int64(len(data)), Lines, Options{})
			for _, off := range order {
				got, err := w.lineAt(off)
				want, werr := data[off:off+int64(bytes.IndexByte(data[off:], '\n'))], error(nil)
				if err != nil || werr != nil || !bytes.Equal(got, want) {
					t.Fatalf("line at %d: %d bytes, %v; want %d bytes, %v", off, len(got), err, len(want), werr)
				}
			}
			if _, err := w.lineAt(tornOff); !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("final line without newline: %v, want io.ErrUnexpectedEOF", err)
			}
		})
	}
	t.Run("over the limit", func(t *testing.T) {
		w := NewCursor(f, int64(len(data)), Lines, Options{Limit: surfaceWindowSize})
		long := offs[7] // 3 windows long
		if _, err := w.lineAt(long); !errors.Is(err, ErrReadLimit) {
			t.Errorf("line of %d bytes under a %d-byte limit: %v, want ErrReadLimit", 3*surfaceWindowSize, surfaceWindowSize, err)
		}
		if got, err := w.lineAt(offs[8]); err != nil || string(got) != string(data[offs[8]:offs[8]+7]) {
			t.Errorf("the next line after a refused one: %q, %v", got, err)
		}
	})
}

// TestRandomAccessFrames: every frame the random-access input returns is
// the frame readFrameAtLimit returns (small frames sharing a buffer,
// frames larger than it), a torn final frame comes back to EOF with
// io.ErrUnexpectedEOF, and a frame over the limit fails with ErrReadLimit.
func TestRandomAccessFrames(t *testing.T) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(2))
	var data []byte
	var offs []int64
	for _, n := range []int{10, 3000, 2 * surfaceWindowSize, 5, surfaceWindowSize - 20, 700 << 10, 1} {
		plain := make([]byte, n) // random bytes barely compress: frames as long as n
		rng.Read(plain)
		offs = append(offs, int64(len(data)))
		data = enc.EncodeAll(plain, data)
	}
	full := len(data)
	tornOff := int64(full)
	last := enc.EncodeAll(bytes.Repeat([]byte("torn"), 100000), nil)
	data = append(data, last[:len(last)/2]...)
	f := writeTemp(t, data)
	w := NewCursor(f, int64(len(data)), Frames, Options{})
	for pass := 0; pass < 2; pass++ { // the second pass goes backwards
		for i := range offs {
			off := offs[i]
			if pass == 1 {
				off = offs[len(offs)-1-i]
			}
			got, err := w.frameAt(off)
			want, werr := readFrameAtLimit(f, off, DefaultReadLimit)
			if err != nil || werr != nil || !bytes.Equal(got, want) {
				t.Fatalf("frame at %d: %d bytes, %v; want %d bytes, %v", off, len(got), err, len(want), werr)
			}
		}
	}
	got, err := w.frameAt(tornOff)
	if !errors.Is(err, io.ErrUnexpectedEOF) || !bytes.Equal(got, data[tornOff:]) {
		t.Errorf("torn frame: %d bytes, %v; want the %d bytes to EOF, io.ErrUnexpectedEOF", len(got), err, len(data)-full)
	}
	small := NewCursor(f, int64(len(data)), Frames, Options{Limit: 64 << 10})
	if _, err := small.frameAt(offs[2]); !errors.Is(err, ErrReadLimit) {
		t.Errorf("frame of %d bytes under a 64 KiB limit: %v, want ErrReadLimit", 2*surfaceWindowSize, err)
	}
	if _, err := w.frameAt(offs[1] + 1); err == nil {
		t.Errorf("frame read in the middle of a frame: no error")
	}
}

// readFrameAtLimit is readFrameAt for a frame of at most limit bytes
// (plus block framing): a frame whose compressed bytes alone pass that
// cannot decode within the limit (or is padding of empty blocks) and
// fails with a read-limit error before more of it is read.
func readFrameAtLimit(f *os.File, off, limit int64) ([]byte, error) {
	maxBytes := limit + overshoot
	buf := make([]byte, 64<<10)
	n := 0
	for {
		m, err := f.ReadAt(buf[n:], off+int64(n))
		n += m
		end, complete, ferr := frameEnd(buf[:n], 0, off)
		if ferr != nil {
			return nil, ferr
		}
		if complete {
			return buf[:end], nil
		}
		if err == io.EOF {
			return buf[:n], io.ErrUnexpectedEOF
		}
		if err != nil {
			return nil, err
		}
		if n == len(buf) {
			if int64(n) >= maxBytes {
				return nil, Limitf(limit, "a zstd frame holds more bytes than the read limit")
			}
			buf = growBuf(buf, maxBytes)
		}
	}
}
