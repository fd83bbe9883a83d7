package sessionstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript"
)

// Store reads one store root. It never writes, locks or renames anything
// under the root. It is safe for concurrent use.
type Store struct {
	root string
	// enc is the pinned encoding; 0 reads each session directory by the
	// suffix transcriptFor picks.
	enc Encoding
	// limit is the read limit (Options.ReadLimit) in bytes.
	limit int64
}

// Options configures OpenWith.
type Options struct {
	// Encoding pins the store encoding like OpenEncoding; 0 detects it
	// like Open.
	Encoding Encoding
	// ReadLimit bounds the memory one read may use: the most decoded
	// bytes of one zstd frame (complete or torn) or one raw line that a
	// streamed read (ReadSurface, ReadTitle) holds at once, and of the
	// whole log for a full load (Load). A session over it fails to read
	// with an error matching ErrReadLimit (Kind KindIO); other sessions
	// are unaffected. 0 means $DSH_LSP_READ_LIMIT_MB MiB when that is set,
	// else DefaultReadLimit; values under 16 MiB are raised to 16 MiB. Peak
	// memory of one read is a small multiple of it (SECURITY.md).
	ReadLimit int64
}

// effectiveReadLimit resolves Options.ReadLimit (see there).
func effectiveReadLimit(n int64) int64 {
	if n == 0 {
		n = DefaultReadLimit
		if v, err := strconv.ParseInt(strings.TrimSpace(os.Getenv(transcript.ReadLimitEnv)), 10, 64); err == nil && v > 0 && v <= 1<<20 {
			n = v << 20
		}
	}
	return max(n, transcript.MinReadLimit)
}

// OpenWith returns a Store over root configured by o. Transcripts are
// opened relative to the root without following any symlink below it
// (open_*.go), so a directory swapped for a symlink cannot lead a read
// out of the store.
func OpenWith(root string, o Options) (*Store, error) {
	if o.Encoding != 0 && o.Encoding != Raw && o.Encoding != Zstd {
		return nil, fmt.Errorf("sessionstore: unknown encoding %d", o.Encoding)
	}
	registerRoot(root)
	return &Store{root: root, enc: o.Encoding, limit: effectiveReadLimit(o.ReadLimit)}, nil
}

// ReadLimit returns the store's read limit in bytes (Options.ReadLimit).
func (s *Store) ReadLimit() int64 { return s.limit }

// Root returns the store root directory.
func (s *Store) Root() string { return s.root }

// skippedTranscript reports a session directory's transcript that is not
// read because the other one is (transcriptFor).
func skippedTranscript(dir string, read, skipped Encoding) error {
	path := filepath.Join(dir, skipped.FileName())
	if read == 0 {
		return fmt.Errorf("sessionstore: %s: skipped: a %s transcript in a store pinned to %s", path, skipped, skipped.other())
	}
	return fmt.Errorf("sessionstore: %s: skipped: the session directory also holds %s, which is read", path, read.FileName())
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// checkIdentity recomputes the header's path (spec §1.3 step 6).
func (s *Store) checkIdentity(h *transcript.Header, path string, enc Encoding) error {
	if h.ID == "" || (h.CWD != nil && *h.CWD == "") {
		return transcript.Corruptf("header id or cwd is empty and cannot name a path")
	}
	want, err := SessionPath(s.root, h.CWD, h.ID, enc)
	if err != nil {
		return transcript.Corruptf("header cannot name a path: %v", err)
	}
	if want == path {
		return nil
	}
	a, errA := filepath.EvalSymlinks(want)
	b, errB := filepath.EvalSymlinks(path)
	if errA == nil && errB == nil && a == b {
		return nil
	}
	return transcript.Corruptf("header (id %s, cwd %s) belongs at %s", jsjson.Quote(h.ID), cwdString(h.CWD), want)
}

func cwdString(c *string) string {
	if c == nil {
		return "none"
	}
	return jsjson.Quote(*c)
}

// find locates the transcript of id (dsh findLog): every project directory
// is searched for <project>/<encodeSegment(id)>/.
func (s *Store) find(id string) (string, Encoding, error) {
	seg, err := EncodeSegment(id)
	if err != nil {
		return "", 0, notFound(id)
	}
	projects, err := os.ReadDir(s.root)
	if errors.Is(err, fs.ErrNotExist) {
		return "", 0, notFound(id)
	}
	if err != nil {
		return "", 0, &Error{Kind: KindIO, SessionID: id, Path: s.root, Msg: "cannot list the store root", Err: err}
	}
	var matches []string
	var encs []Encoding
	for _, p := range projects {
		if !p.IsDir() {
			continue
		}
		dir := filepath.Join(s.root, p.Name(), seg)
		st, err := os.Lstat(dir) // a symlinked session directory may lead out of the root
		if err != nil || !st.IsDir() {
			continue
		}
		enc, _ := transcriptFor(s.enc, exists(filepath.Join(dir, Raw.FileName())), exists(filepath.Join(dir, Zstd.FileName())))
		if enc == 0 {
			continue
		}
		matches = append(matches, filepath.Join(dir, enc.FileName()))
		encs = append(encs, enc)
	}
	switch len(matches) {
	case 0:
		return "", 0, notFound(id)
	case 1:
		return matches[0], encs[0], nil
	}
	return "", 0, &Error{Kind: KindIO, SessionID: id, Path: matches[1], Msg: "duplicate JSONL session id (also at " + matches[0] + ")"}
}

// surfaceBudget holds the surface events one read keeps (a prepare's
// source: every message it may render) to the read limit, counted in the
// bytes of their raw records plus surfaceEventCost each: what a kept event
// costs besides its bytes (its structs, its fold and projection entries),
// so that a log of a million tiny messages is held to the limit too.
type surfaceBudget struct {
	limit, used int64
	// over is set once the kept events passed the limit; nothing more is
	// kept.
	over bool
}

// add counts ev and reports whether it may be kept.
func (b *surfaceBudget) add(ev reference.SurfaceEvent) bool {
	if b.over {
		return false
	}
	b.used += int64(len(ev.Raw)) + surfaceEventCost
	b.over = b.used > b.limit
	return !b.over
}

// surfaceEventCost is the fixed cost counted for each kept surface event
// (measured: 1,000,000 messages of 175 bytes peaked at 4.8 × their raw
// bytes in a prepare).
const surfaceEventCost = 256

func (b *surfaceBudget) err() error {
	return transcript.Limitf(b.limit, "the session's surface (the messages a read keeps) holds more bytes than the read limit")
}

// DefaultReadLimit is the default read limit (IndexOptions.ReadLimit,
// Options.ReadLimit; transcript.DefaultReadLimit).
const DefaultReadLimit = transcript.DefaultReadLimit
