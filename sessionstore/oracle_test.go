package sessionstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dsh-lsp/dsh-lsp/internal/beneath"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript/transcripttest"
)

// The full load: the whole transcript read into memory, scanned and folded
// keeping every event. It is the definition the index's incremental read is
// checked against (TestFoldPoliciesAgree, FuzzFoldPolicies,
// TestIndexedEqualsFullReadAfterRandomChanges, sameAsStore), not a
// production read path.

// readStable reads a file that may be growing: it re-reads until a stat
// before and after agree (as dsh does), a few times at most; the torn-tail
// rules make any prefix safe to parse anyway. A file over limit bytes is
// refused before it is read (and never read past limit if it grows).
func readStable(root, path string, limit int64) ([]byte, error) {
	var data []byte
	for attempt := 0; attempt < 4; attempt++ {
		f, st1, err := beneath.Open(nil, root, path)
		if err != nil {
			return nil, err
		}
		if st1.Size() > limit {
			f.Close()
			return nil, transcript.Limitf(limit, "the transcript holds %d bytes, more than the read limit of a full load", st1.Size())
		}
		data, err = io.ReadAll(io.NewSectionReader(f, 0, limit+1))
		st2, err2 := os.Stat(path)
		f.Close()
		if err != nil {
			return nil, err
		}
		if int64(len(data)) > limit {
			return nil, transcript.Limitf(limit, "the transcript grew past the read limit of a full load while it was read")
		}
		if err2 == nil && st1.Size() == st2.Size() &&
			st1.ModTime().Equal(st2.ModTime()) && int64(len(data)) == st2.Size() {
			break
		}
	}
	return data, nil
}

// Load reads, scans and loads one session (spec §4).
func (s *Store) Load(ctx context.Context, id string) (*transcripttest.Log, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	path, enc, err := s.find(id)
	if err != nil {
		return nil, err
	}
	data, err := readStable(s.root, path, s.limit)
	if le := (*transcript.Error)(nil); errors.As(err, &le) {
		return nil, attach(err, id, path)
	}
	if err != nil {
		return nil, &Error{Kind: KindIO, SessionID: id, Path: path, Msg: "cannot read transcript", Err: err}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var scan *transcripttest.ScannedLog
	if enc == Zstd {
		scan, err = scanZstdLimit(data, s.limit)
	} else {
		scan, err = transcripttest.ScanRaw(data)
	}
	if err != nil {
		return nil, attach(err, id, path)
	}
	if err := s.checkIdentity(scan.Header, path, enc); err != nil {
		return nil, attach(err, id, path)
	}
	log, err := transcripttest.LoadLog(scan, id)
	return log, attach(err, id, path)
}

// ReadSurface is the full load's surface (the oracle of Indexed.ReadSurface).
func (s *Store) ReadSurface(ctx context.Context, id string) (*reference.Surface, error) {
	log, err := s.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	return surfaceSnapshot(log), nil
}

// ReadTitle is the full load's title (the oracle of Indexed.ReadTitles).
func (s *Store) ReadTitle(ctx context.Context, id string) (*transcript.Title, error) {
	log, err := s.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	t, err := logTitle(log)
	return t, attach(err, id, "")
}

// ReadTitles implements reference.Source (dsh readTitleSnapshots, spec §8).
func (s *Store) ReadTitles(ctx context.Context, ids []string) ([]reference.TitleResult, error) {
	return readTitles(ctx, ids, s.ReadTitle)
}

// ScanZstd scans a zstd transcript (spec §3.2). The decoded log may hold
// at most DefaultReadLimit bytes.
func ScanZstd(data []byte) (*transcripttest.ScannedLog, error) {
	return scanZstdLimit(data, DefaultReadLimit)
}

// scanZstdLimit is ScanZstd with a budget of limit decoded bytes for the
// whole log (every frame, the torn final one included, counts).
func scanZstdLimit(data []byte, limit int64) (*transcripttest.ScannedLog, error) {
	decoded := &transcript.DecodedBudget{Limit: limit}
	cur := transcript.NewCursorBytes(data, transcript.Frames, transcript.Options{Limit: limit, Budget: decoded, ExpandRows: true})
	defer cur.Close()
	out := &transcripttest.ScannedLog{}
	// Logical bytes: the header line, then each frame's text; the torn
	// tail is what follows the last good line.
	var complete, good int64
	for {
		rec, err := cur.Next()
		if err == io.EOF {
			break
		}
		if err != nil && out.Header == nil {
			return nil, err // the header frame's own limit is not the log's
		}
		if err != nil {
			return nil, wholeLogLimit(err, limit)
		}
		if rec.Header != nil {
			out.Header, out.HeaderLine = rec.Header, rec.HeaderLine
			continue
		}
		if int64(len(out.HeaderLine))+1+decoded.Used > limit {
			return nil, wholeLogLimit(ErrReadLimit, limit)
		}
		if rec.Loc.Torn {
			good = complete + rec.Loc.Inner + int64(rec.Size) + 1
		} else {
			complete, good = decoded.Used, decoded.Used
		}
		out.Events = append(out.Events, rec.Events...)
	}
	if int64(len(out.HeaderLine))+1+decoded.Used > limit {
		return nil, wholeLogLimit(ErrReadLimit, limit)
	}
	pos := cur.Position()
	out.Frames, out.Offset = pos.Frames, pos.Offset
	out.TornBytes = decoded.Used - good
	return out, nil
}

// wholeLogLimit rewords a frame's read-limit error for a whole-log read.
func wholeLogLimit(err error, limit int64) error {
	if errors.Is(err, ErrReadLimit) {
		return transcript.Limitf(limit, "the decoded log holds more bytes than the read limit")
	}
	return err
}

// Discover is the store's header-only listing (the oracle of the index's).
// Listing is the result of discovery: the listed headers (in listSessions
// order) and the sessions that were skipped, with why.
type Listing struct {
	Headers []reference.SessionHeader
	// Paths maps a listed id to its transcript path.
	Paths map[string]string
	// Problems are per-session failures (each an *Error when the id is
	// known, else an error naming the path).
	Problems []error
}

// ListSessions implements reference.Source.
func (s *Store) ListSessions(ctx context.Context) ([]reference.SessionHeader, error) {
	l, err := s.Discover(ctx)
	if err != nil {
		return nil, err
	}
	return l.Headers, nil
}

// Discover lists the store header-only (spec §1.3) without failing on one
// bad session.
func (s *Store) Discover(ctx context.Context) (*Listing, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	projects, err := os.ReadDir(s.root)
	if errors.Is(err, fs.ErrNotExist) {
		return &Listing{Paths: map[string]string{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sessionstore: listing root %s: %w", s.root, err)
	}
	type candidate struct{ dir, raw, zst string }
	var cands []candidate
	var problems []error
	for _, p := range projects {
		if !p.IsDir() {
			continue
		}
		pdir := filepath.Join(s.root, p.Name())
		entries, err := os.ReadDir(pdir)
		if err != nil {
			problems = append(problems, fmt.Errorf("sessionstore: listing project directory %s: %w", pdir, err))
			continue
		}
		for _, e := range entries {
			name := e.Name()
			if !e.IsDir() {
				if strings.HasSuffix(name, ".jsonl") || strings.HasSuffix(name, ".jsonl.zstd") {
					problems = append(problems, fmt.Errorf("sessionstore: %s: obsolete flat session file (ignored)", filepath.Join(pdir, name)))
				}
				continue
			}
			c := candidate{dir: filepath.Join(pdir, name)}
			if exists(filepath.Join(c.dir, Raw.FileName())) {
				c.raw = filepath.Join(c.dir, Raw.FileName())
			}
			if exists(filepath.Join(c.dir, Zstd.FileName())) {
				c.zst = filepath.Join(c.dir, Zstd.FileName())
			}
			if c.raw != "" || c.zst != "" {
				cands = append(cands, c)
			}
		}
	}
	l := &Listing{Paths: map[string]string{}}
	l.Problems = problems
	for _, c := range cands {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		enc, skipped := transcriptFor(s.enc, c.raw != "", c.zst != "")
		if skipped != 0 {
			l.Problems = append(l.Problems, skippedTranscript(c.dir, enc, skipped))
		}
		if enc == 0 {
			continue
		}
		path := filepath.Join(c.dir, enc.FileName())
		h, err := readHeader(s.root, path, enc)
		if err != nil {
			if err != transcript.ErrNoHeaderYet {
				l.Problems = append(l.Problems, attach(err, segmentID(filepath.Base(c.dir)), path))
			}
			continue
		}
		if err := s.checkIdentity(h, path, enc); err != nil {
			l.Problems = append(l.Problems, attach(err, h.ID, path))
			continue
		}
		if _, dup := l.Paths[h.ID]; dup {
			l.Problems = append(l.Problems, attach(transcript.Corruptf("duplicate JSONL session id (also at %s)", l.Paths[h.ID]), h.ID, path))
			continue
		}
		l.Paths[h.ID] = path
		l.Headers = append(l.Headers, h.Reference())
	}
	SortHeaders(l.Headers)
	return l, nil
}

// segmentID best-effort decodes a session directory name to the id it
// encodes (for error messages about sessions whose header is unreadable).
func segmentID(seg string) string {
	if id, ok := DecodeSegment(seg); ok {
		return id
	}
	return seg
}

// readHeader reads only the header of the transcript at path, opened
// without following symlinks below root (see beneath.Open).
func readHeader(root, path string, enc Encoding) (*transcript.Header, error) {
	f, _, err := beneath.Open(nil, root, path)
	if err != nil {
		return nil, &transcript.Error{Kind: KindIO, Msg: "cannot open transcript", Err: err}
	}
	defer f.Close()
	return transcript.ReadHeader(f, enc.framing())
}
