// Package workload writes realistic dsh session stores in the real on-disk
// format (spec/dsh-session-format.md §1-§3) for benchmarks and tests: raw
// JSONL or Zstandard (a header frame, then one frame per flush batch),
// current-format events with packed chunk rows, titles, tool calls and
// compaction checkpoints.
package workload

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/dsh-lsp/dsh-lsp/sessionstore/storepath"
	"github.com/klauspost/compress/zstd"
)

// Compression is the store encoding.
type Compression string

// Store encodings.
const (
	None Compression = "none"
	Zstd Compression = "zstd"
)

// Suffix returns the transcript file suffix of c.
func (c Compression) Suffix() string {
	if c == Zstd {
		return ".jsonl.zstd"
	}
	return ".jsonl"
}

// Options describes a generated store.
type Options struct {
	// Sessions is the number of sessions.
	Sessions int
	// CWDs is the number of distinct working directories (at least 1).
	CWDs int
	// Turns is the number of user prompts per session (see SessionSpec).
	Turns int
	// Size is the target plaintext bytes per session (see SessionSpec).
	Size        int64
	Compression Compression
	Multibyte   float64
	Compactions int
	// NoCWD is the share of sessions without a cwd.
	NoCWD float64
	Seed  int64
	// Workers bounds parallel writers (0 = GOMAXPROCS).
	Workers int
}

// Info describes one written session.
type Info struct {
	ID        string `json:"id"`
	CWD       string `json:"cwd,omitempty"`
	CreatedAt int64  `json:"createdAt"`
	Path      string `json:"path"`
	// Plain is the plaintext (decompressed) size, File the size on disk.
	Plain int64  `json:"plainBytes"`
	File  int64  `json:"fileBytes"`
	Title string `json:"title,omitempty"`
	// Batches is the number of flush batches (zstd frames after the
	// header frame).
	Batches int `json:"batches"`
}

// BaseTime is the createdAt of the oldest generated session.
const BaseTime int64 = 1786000000000

// Specs returns the session specs of opts, deterministic in opts.Seed.
// Session i is created one minute (plus jitter) after session i-1.
func Specs(opts Options) []SessionSpec {
	rng := rand.New(rand.NewSource(opts.Seed))
	k := max(opts.CWDs, 1)
	cwds := make([]string, k)
	for i := range cwds {
		cwds[i] = fmt.Sprintf("/home/alice/work/project-%03d", i)
	}
	specs := make([]SessionSpec, opts.Sessions)
	t := BaseTime
	for i := range specs {
		t += 60000 + int64(rng.Intn(30000))
		cwd := cwds[rng.Intn(k)]
		if opts.NoCWD > 0 && rng.Float64() < opts.NoCWD {
			cwd = ""
		}
		specs[i] = SessionSpec{
			ID:          uuid(rng),
			CWD:         cwd,
			CreatedAt:   t,
			Turns:       opts.Turns,
			Size:        opts.Size,
			Multibyte:   opts.Multibyte,
			Compactions: opts.Compactions,
			Seed:        opts.Seed*1_000_003 + int64(i),
		}
	}
	return specs
}

// PathOf returns where spec's transcript lives under root, as dsh names
// it (storepath.Dir). spec.ID must not be empty.
func PathOf(root string, spec SessionSpec, c Compression) string {
	var cwd *string
	if spec.CWD != "" {
		cwd = &spec.CWD
	}
	dir, err := storepath.Dir(root, cwd, spec.ID)
	if err != nil {
		panic(fmt.Sprintf("workload: session %q has no path: %v", spec.ID, err))
	}
	return filepath.Join(dir, "session"+c.Suffix())
}

// Generate writes a store under root (created if missing) and returns one
// Info per session, in creation order. progress, when non-nil, is called
// after each session with the count done.
func Generate(root string, opts Options, progress func(done int)) ([]Info, error) {
	if opts.Compression == "" {
		opts.Compression = None
	}
	if opts.Compression != None && opts.Compression != Zstd {
		return nil, fmt.Errorf("workload: unknown compression %q (want none or zstd)", opts.Compression)
	}
	specs := Specs(opts)
	infos := make([]Info, len(specs))
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		done     int
	)
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				info, err := WriteSession(PathOf(root, specs[i], opts.Compression), specs[i], opts.Compression)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				infos[i] = info
				done++
				if progress != nil {
					progress(done)
				}
				mu.Unlock()
			}
		}()
	}
	for i := range specs {
		mu.Lock()
		failed := firstErr != nil
		mu.Unlock()
		if failed {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return infos, firstErr
}

// WriteSession writes one complete session file at path (directories
// created), streaming batch by batch so multi-GB logs need little memory.
func WriteSession(path string, spec SessionSpec, c Compression) (Info, error) {
	info := Info{ID: spec.ID, CWD: spec.CWD, CreatedAt: spec.CreatedAt, Path: path}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return info, err
	}
	f, err := os.Create(path)
	if err != nil {
		return info, err
	}
	w := NewFileWriter(f, c)
	gen := NewSession(spec)
	if err := w.WriteBatch(gen.Header()); err != nil {
		f.Close()
		return info, fmt.Errorf("write %s: %w", path, err)
	}
	for b := gen.NextBatch(); b != nil; b = gen.NextBatch() {
		if err := w.WriteBatch(b); err != nil {
			f.Close()
			return info, fmt.Errorf("write %s: %w", path, err)
		}
		info.Batches++
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return info, fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return info, err
	}
	info.Plain = gen.Written()
	info.File = w.Bytes()
	info.Title, _ = gen.LatestTitle()
	return info, nil
}

// FileWriter writes flush batches to a transcript: raw bytes, or one
// Zstandard frame (checksum on, default level) per batch, as dsh does.
type FileWriter struct {
	w     *bufio.Writer
	c     Compression
	enc   *zstd.Encoder
	frame []byte
	n     int64
}

var (
	encoderOnce sync.Once
	encoder     *zstd.Encoder
)

// sharedEncoder returns a process-wide zstd encoder; EncodeAll is safe for
// concurrent use.
func sharedEncoder() *zstd.Encoder {
	encoderOnce.Do(func() {
		var err error
		encoder, err = zstd.NewWriter(nil, zstd.WithEncoderCRC(true), zstd.WithEncoderLevel(zstd.SpeedDefault))
		if err != nil {
			panic(err)
		}
	})
	return encoder
}

// NewFileWriter returns a writer of batches in encoding c to w.
func NewFileWriter(w io.Writer, c Compression) *FileWriter {
	fw := &FileWriter{w: bufio.NewWriterSize(w, 1<<20), c: c}
	if c == Zstd {
		fw.enc = sharedEncoder()
	}
	return fw
}

// EncodeBatch returns batch as it is stored: unchanged for raw stores, one
// complete zstd frame for zstd stores.
func EncodeBatch(c Compression, batch []byte) []byte {
	if c == Zstd {
		return sharedEncoder().EncodeAll(batch, nil)
	}
	return append([]byte(nil), batch...)
}

// WriteBatch writes one batch (complete lines).
func (fw *FileWriter) WriteBatch(batch []byte) error {
	data := batch
	if fw.enc != nil {
		fw.frame = fw.enc.EncodeAll(batch, fw.frame[:0])
		data = fw.frame
	}
	n, err := fw.w.Write(data)
	fw.n += int64(n)
	return err
}

// Flush flushes buffered bytes.
func (fw *FileWriter) Flush() error { return fw.w.Flush() }

// Bytes returns the bytes written so far.
func (fw *FileWriter) Bytes() int64 { return fw.n }

// Batches returns a small session's header and batches in memory (for
// tests that write, append, truncate and replace files themselves).
func Batches(spec SessionSpec) (header []byte, batches [][]byte) {
	gen := NewSession(spec)
	header = gen.Header()
	for b := gen.NextBatch(); b != nil; b = gen.NextBatch() {
		batches = append(batches, append([]byte(nil), b...))
	}
	return header, batches
}

// Transcripts returns the session transcripts (session.jsonl and
// session.jsonl.zstd files) under root, in walk order; unreadable
// directories are skipped.
func Transcripts(root string) []string {
	var paths []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (d.Name() == "session.jsonl" || d.Name() == "session.jsonl.zstd") {
			paths = append(paths, p)
		}
		return nil
	})
	return paths
}

// ParseSize reads a byte count with an optional B, KB, MB or GB suffix
// (1024-based; case and spaces ignored), as the bench and stress commands
// take sizes: "20MB", "1.5 gb", "4096".
func ParseSize(s string) (int64, error) {
	u := strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, suf := range []struct {
		s string
		m int64
	}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(u, suf.s) {
			u, mult = strings.TrimSuffix(u, suf.s), suf.m
			break
		}
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(u), 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad size %q (want e.g. 20MB)", s)
	}
	return int64(n * float64(mult)), nil
}
