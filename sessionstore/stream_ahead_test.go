package sessionstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// streamAnswer is everything a streamed read decides.
type streamAnswer struct {
	header  string
	read    int64
	err     string
	state   foldState
	foldErr string
	kept    map[int64]reference.SurfaceEvent
}

func runStream(t *testing.T, path string, limit int64, stream func(context.Context, *os.File, *fold, int64) (*Header, int64, error)) streamAnswer {
	t.Helper()
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	f := newFold("stream-test")
	kept := map[int64]reference.SurfaceEvent{}
	f.onNode = func(e *Event, _ int, shadowed []int64) {
		for _, s := range shadowed {
			delete(kept, s)
		}
		kept[e.Seq] = surfaceEvent(e)
	}
	h, read, err := stream(context.Background(), file, f, limit)
	a := streamAnswer{read: read, state: f.foldState, kept: kept}
	if h != nil {
		a.header = string(h.Object())
	}
	if err != nil {
		a.err = fmt.Sprintf("%T %v", err, err)
	}
	if err := f.err(); err != nil {
		a.foldErr = err.Error()
	}
	return a
}

// TestStreamAheadSameAnswers: the two-goroutine streamed read
// (stream_ahead.go) gives exactly the one-goroutine read's answer (header,
// bytes read, error, fold state, kept surface) for every transcript in
// testdata and generated sessions, raw and zstd, whole, truncated at
// random offsets, with random bytes flipped, and under a read limit small
// enough to refuse their longer lines and frames.
func TestStreamAheadSameAnswers(t *testing.T) {
	t.Parallel()
	var paths []string
	filepath.WalkDir(filepath.Join("..", "testdata"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (d.Name() == Raw.FileName() || d.Name() == Zstd.FileName()) {
			paths = append(paths, p)
		}
		return nil
	})
	// Generated sessions of ~1 MiB (many records, compactions, multibyte
	// text) on top of the fixtures; every variant is read twice per limit,
	// so their size is most of the test's cost, while the reader never
	// holds more than aheadBytes (4 MiB) ahead either way.
	gen := t.TempDir()
	for _, c := range []workload.Compression{workload.None, workload.Zstd} {
		infos, err := workload.Generate(gen, workload.Options{Sessions: 2, CWDs: 1, Turns: 40, Size: 1 << 20, Compression: c, Multibyte: 0.3, Compactions: 1, Seed: 5}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range infos {
			paths = append(paths, in.Path)
		}
	}
	if len(paths) < 10 {
		t.Fatalf("only %d transcripts found", len(paths))
	}
	rng := rand.New(rand.NewSource(9))
	dir := t.TempDir()
	variants := 0
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		seq, ahead := streamRawSeq, streamRaw
		if strings.HasSuffix(p, Zstd.FileName()) {
			seq, ahead = streamZstdSeq, streamZstd
		}
		cases := map[string][]byte{"whole": data}
		for i := 0; i < 6 && len(data) > 1; i++ {
			cut := rng.Intn(len(data))
			cases[fmt.Sprintf("cut at %d", cut)] = data[:cut]
			flipped := bytes.Clone(data)
			at := rng.Intn(len(data))
			flipped[at] ^= byte(1 + rng.Intn(255))
			cases[fmt.Sprintf("byte %d flipped", at)] = flipped
		}
		for name, b := range cases {
			path := filepath.Join(dir, filepath.Base(p))
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, limit := range []int64{DefaultReadLimit, 2 << 10} {
				variants++
				want := runStream(t, path, limit, seq)
				got := runStream(t, path, limit, ahead)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s, %s, limit %d:\n got read %d, err %q, fold err %q, %d events, %d kept\nwant read %d, err %q, fold err %q, %d events, %d kept",
						p, name, limit, got.read, got.err, got.foldErr, got.state.Count, len(got.kept), want.read, want.err, want.foldErr, want.state.Count, len(want.kept))
				}
			}
		}
	}
	t.Logf("%d transcripts, %d variants", len(paths), variants)
}

// TestStreamAheadCancelled: a read cancelled mid-way ends with the
// context's error and leaves no reader goroutine behind (stop waits for
// it).
func TestStreamAheadCancelled(t *testing.T) {
	// Generated sessions of ~1 MiB (many records, compactions, multibyte
	// text) on top of the fixtures; every variant is read twice per limit,
	// so their size is most of the test's cost, while the reader never
	// holds more than aheadBytes (4 MiB) ahead either way.
	gen := t.TempDir()
	for _, c := range []workload.Compression{workload.None, workload.Zstd} {
		infos, err := workload.Generate(gen, workload.Options{Sessions: 1, CWDs: 1, Turns: 200, Size: 8 << 20, Compression: c, Seed: 6}, nil)
		if err != nil {
			t.Fatal(err)
		}
		stream := streamRaw
		if c == workload.Zstd {
			stream = streamZstd
		}
		file, err := os.Open(infos[0].Path)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		f := newFold("x")
		n := 0
		f.onNode = func(*Event, int, []int64) {
			if n++; n == 10 {
				cancel()
			}
		}
		_, _, err = stream(ctx, file, f, DefaultReadLimit)
		file.Close()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%v: cancelled read: %v, want context.Canceled", c, err)
		}
	}
}

// streamRawSeq is the one-goroutine streamRaw (the reference for
// TestStreamAheadSameAnswers): ScanRaw over a file read in chunks, feeding f. It returns
// the header and the number of bytes read (the file size at EOF).
// A line longer than limit fails the read (ErrReadLimit).
func streamRawSeq(ctx context.Context, file *os.File, f *fold, limit int64) (*Header, int64, error) {
	buf := make([]byte, streamBuf)
	n := 0         // bytes in buf
	var read int64 // bytes read from f
	var h *Header
	sc := &LineScanner{SkipRows: true}
	var base int64 // logical offset of buf[0]
	eof := false
	for {
		if n == len(buf) {
			if int64(n) > limit {
				return nil, read, limitf(limit, "a line holds more bytes than the read limit")
			}
			buf = growBuf(buf, limit+1)
		}
		m, err := file.Read(buf[n:])
		n += m
		read += int64(m)
		if errors.Is(err, io.EOF) {
			eof = true
		} else if err != nil {
			return nil, read, err
		}
		if err := ctx.Err(); err != nil {
			return nil, read, err
		}
		data := buf[:n]
		pos := 0
		if h == nil {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				if eof {
					return nil, read, backendf("empty or header-less session log")
				}
				continue
			}
			hv, err := parseHeaderLine(data[:i])
			if err != nil {
				return nil, read, err
			}
			h = hv
			pos = i + 1
			sc.GoodEnd = int64(pos)
		}
		for pos < len(data) {
			i := bytes.IndexByte(data[pos:], '\n')
			if i < 0 {
				break
			}
			if err := sc.Feed(data[pos:pos+i], base+int64(pos+i)+1); err != nil {
				return nil, read, markBackend(err)
			}
			drain(sc, f)
			pos += i + 1
		}
		if eof {
			return h, read, nil
		}
		n = copy(buf, data[pos:])
		base += int64(pos)
	}
}

// streamZstdSeq is the one-goroutine streamZstd (the reference): ScanZstd over a file read frame by frame, feeding f.
// Each frame may decode to at most limit bytes (ErrReadLimit).
func streamZstdSeq(ctx context.Context, file *os.File, f *fold, limit int64) (*Header, int64, error) {
	var (
		off     int64
		frames  int
		h       *Header
		pending error // ScanZstd's first decode-stage error; a later framing error wins over it
		logical int64
	)
	sc := &LineScanner{Strict: true, SkipRows: true}
	// Frames are read in order through one window (surface_window.go),
	// not with a 64 KiB buffer and a read per frame of a few KiB.
	win := &fileWindow{f: file}
	for {
		if err := ctx.Err(); err != nil {
			return nil, off, err
		}
		frame, err := win.frame(off, limit)
		if errors.Is(err, io.ErrUnexpectedEOF) || (err == nil && len(frame) == 0) {
			// A torn final frame (possibly empty: EOF at a boundary).
			end := off + int64(len(frame))
			if pending != nil {
				return nil, end, pending
			}
			if frames == 0 {
				return nil, end, backendf("empty or header-less Zstandard session log")
			}
			if len(frame) > 0 {
				text, err := decodeTornFrame(frame, limit)
				if err != nil {
					return nil, end, err
				}
				sc.Strict = false
				if _, err := feedDrain(sc, f, text, logical); err != nil {
					return nil, end, markBackend(err)
				}
			}
			return h, end, nil
		}
		if err != nil {
			return nil, off, err
		}
		off += int64(len(frame))
		frames++
		if pending != nil {
			continue // only the framing of the rest can still matter
		}
		var text []byte
		if frames == 1 {
			// The header frame: at most 1 MiB decoded, like ReadHeader.
			text, err = decodeHeaderFrame(frame)
		} else {
			text, err = decodeFrameLimit(frame, limit)
		}
		switch {
		case err != nil:
			pending = err
		case frames == 1:
			if len(text) == 0 || bytes.IndexByte(text, '\n') != len(text)-1 {
				pending = backendf("first zstd frame is not exactly one header line")
			} else if h, err = parseHeaderLine(text[:len(text)-1]); err != nil {
				pending = err
			}
			logical = int64(len(text))
			sc.GoodEnd = logical
		case len(text) == 0 || text[len(text)-1] != '\n':
			pending = backendf("complete frame %d contains a torn JSONL record", frames)
		default:
			if _, err := feedDrain(sc, f, text, logical); err != nil {
				pending = markBackend(err)
			}
			logical += int64(len(text))
		}
	}
}
