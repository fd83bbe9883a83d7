package sessionstore

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/storepath"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript"
)

// layout is where a store keeps its sessions (spec §1): the one rule for
// which transcript of a session directory is read, whether a header
// belongs where it lies, and which directory an id names, used by listing
// and by lookup. enc is the pinned encoding (0: by suffix, transcriptFor).
type layout struct {
	root string
	enc  Encoding
}

// newLayout checks the pinned encoding.
func newLayout(root string, enc Encoding) (layout, error) {
	if enc != 0 && enc != Raw && enc != Zstd {
		return layout{}, fmt.Errorf("sessionstore: unknown encoding %d", enc)
	}
	return layout{root: root, enc: enc}, nil
}

// sessionDir is <root>/<proj>/<seg>/ and the transcripts it holds.
type sessionDir struct {
	proj, seg       string
	raw, zstd       fileSig
	hasRaw, hasZstd bool
}

// dirKey names a session directory in Indexed.entries: two strings the
// directory's entry already holds, so the map keeps no copies (a string
// key "proj/seg" is 8 MB at 100,000 sessions) and a lookup builds none.
type dirKey struct{ proj, seg string }

// dirKeyOf is the dirKey of a key in its string form (key).
func dirKeyOf(key string) dirKey {
	proj, seg, _ := strings.Cut(key, "/")
	return dirKey{proj, seg}
}

func (d *sessionDir) key() string { return d.proj + "/" + d.seg }

func (d *sessionDir) dirKey() dirKey { return dirKey{d.proj, d.seg} }

// key is the string form of e's dirKey, the key changeSet and the
// watches use.
func (e *entry) key() string { return e.Proj + "/" + e.Seg }

func (e *entry) dirKey() dirKey { return dirKey{e.Proj, e.Seg} }

// compareKeys orders entries by key: the order of a listing's all.
func compareKeys(a, b *entry) int {
	return cmp.Or(strings.Compare(a.Proj, b.Proj), strings.Compare(a.Seg, b.Seg))
}

// appendKey appends the key of session directory seg of project proj to b:
// a lookup in a loop over every session reuses one buffer.
func appendKey(b []byte, proj, seg string) []byte {
	return append(append(append(b, proj...), '/'), seg...)
}

func (d *sessionDir) sig(enc Encoding) (fileSig, bool) {
	if enc == Zstd {
		return d.zstd, d.hasZstd
	}
	return d.raw, d.hasRaw
}

// transcript is the encoding d is read by; the pinned one when d holds
// only a skipped transcript (d then indexes as missing its transcript).
func (l layout) transcript(d *sessionDir) Encoding {
	if enc, _ := transcriptFor(l.enc, d.hasRaw, d.hasZstd); enc != 0 {
		return enc
	}
	return l.enc
}

// match is a session directory with a transcript that is read.
type match[T any] struct {
	dir T
	enc Encoding
}

// named applies dsh findLog's rule to the directories of one id's segment
// (one per project): n of them hold a transcript that is read, first are
// the first two. n > 1 is a duplicate id.
func named[T any](l layout, dirs []T, holds func(T) (hasRaw, hasZstd bool)) (n int, first [2]match[T]) {
	for _, d := range dirs {
		hasRaw, hasZstd := holds(d)
		if enc, _ := transcriptFor(l.enc, hasRaw, hasZstd); enc != 0 {
			if n < len(first) {
				first[n] = match[T]{d, enc}
			}
			n++
		}
	}
	return n, first
}

// find locates the transcript of id on disk (dsh findLog): every project
// directory is searched for <project>/<storepath.EncodeSegment(id)>/.
func (l layout) find(id string) (string, Encoding, error) {
	seg, err := storepath.EncodeSegment(id)
	if err != nil {
		return "", 0, notFound(id)
	}
	projects, err := subdirs(l.root)
	if errors.Is(err, fs.ErrNotExist) {
		return "", 0, notFound(id)
	}
	if err != nil {
		return "", 0, &Error{Kind: KindIO, SessionID: id, Path: l.root, Msg: "cannot list the store root", Err: err}
	}
	var dirs []string
	for _, p := range projects {
		dir := filepath.Join(l.root, p, seg)
		// Lstat: a symlinked session directory may lead out of the root.
		if st, err := os.Lstat(dir); err == nil && st.IsDir() {
			dirs = append(dirs, dir)
		}
	}
	n, m := named(l, dirs, func(dir string) (bool, bool) {
		return exists(filepath.Join(dir, Raw.FileName())), exists(filepath.Join(dir, Zstd.FileName()))
	})
	switch n {
	case 0:
		return "", 0, notFound(id)
	case 1:
		return filepath.Join(m[0].dir, m[0].enc.FileName()), m[0].enc, nil
	}
	return "", 0, &Error{Kind: KindIO, SessionID: id, Path: filepath.Join(m[1].dir, m[1].enc.FileName()),
		Msg: "duplicate JSONL session id (also at " + filepath.Join(m[0].dir, m[0].enc.FileName()) + ")"}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// checkIdentity recomputes the header's path (spec §1.3 step 6).
func (l layout) checkIdentity(h *transcript.Header, path string, enc Encoding) error {
	if h.ID == "" || (h.CWD != nil && *h.CWD == "") {
		return transcript.Corruptf("header id or cwd is empty and cannot name a path")
	}
	want, err := SessionPath(l.root, h.CWD, h.ID, enc)
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
	cwd := "none"
	if h.CWD != nil {
		cwd = jsjson.Quote(*h.CWD)
	}
	return transcript.Corruptf("header (id %s, cwd %s) belongs at %s", jsjson.Quote(h.ID), cwd, want)
}

// skippedTranscript reports a transcript not read (transcriptFor).
func skippedTranscript(dir string, read, skipped Encoding) error {
	path := filepath.Join(dir, skipped.FileName())
	if read == 0 {
		return fmt.Errorf("sessionstore: %s: skipped: a %s transcript in a store pinned to %s", path, skipped, skipped.other())
	}
	return fmt.Errorf("sessionstore: %s: skipped: the session directory also holds %s, which is read", path, read.FileName())
}

// DefaultReadLimit is the read limit when IndexOptions.ReadLimit is 0 and
// the environment sets none (transcript.DefaultReadLimit).
const DefaultReadLimit = transcript.DefaultReadLimit

// effectiveReadLimit resolves IndexOptions.ReadLimit (see there).
func effectiveReadLimit(n int64) int64 {
	if n == 0 {
		n = DefaultReadLimit
		if v, err := strconv.ParseInt(strings.TrimSpace(os.Getenv(transcript.ReadLimitEnv)), 10, 64); err == nil && v > 0 && v <= 1<<20 {
			n = v << 20
		}
	}
	return max(n, transcript.MinReadLimit)
}
