package sessionstore

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript"
)

// The persisted index is one file per store root in the cache directory:
//
//	"DSHLSPIX" | uint32 version | gob(cacheFile) | uint32 CRC-32 of the gob bytes
//
// written to a temporary file in the cache directory and renamed into
// place. A missing, foreign-version, corrupt or other-root file is ignored
// and the index is rebuilt. Nothing is ever written under the store root.

const (
	cacheMagic   = "DSHLSPIX"
	cacheVersion = 6
	// persistEvery bounds how often background refreshes rewrite the
	// cache file.
	persistEvery = 30 * time.Second
)

type cacheFile struct {
	Root    string
	Pinned  Encoding
	Entries []*entry
	// Present holds, parallel to Entries, which of each entry's pointers
	// were set: gob leaves zero values out, so a pointer to "" (an empty
	// title or cwd, which dsh labels differently from none) would decode
	// as nil.
	Present []presence
}

// presence records which of an entry's persisted pointers are set
// (TestCachePersistsEveryPointer checks every pointer has a bit).
type presence uint8

const (
	hasListedCWD presence = 1 << iota
	hasState
	hasFoldTitle
	hasTitleText
)

// presenceOf returns which of e's pointers are set.
func presenceOf(e *entry) presence {
	var p presence
	if e.ListedCWD != nil {
		p |= hasListedCWD
	}
	if e.State != nil {
		p |= hasState
		if e.State.Fold.Title != nil {
			p |= hasFoldTitle
		}
	}
	if e.TitleText != nil {
		p |= hasTitleText
	}
	return p
}

// restore sets the pointers of a decoded e that p says were set but gob
// left nil (they pointed to zero values).
func (p presence) restore(e *entry) {
	if p&hasListedCWD != 0 && e.ListedCWD == nil {
		e.ListedCWD = new(string)
	}
	if p&hasState != 0 && e.State == nil {
		e.State = &logState{}
	}
	if p&hasFoldTitle != 0 && e.State != nil && e.State.Fold.Title == nil {
		e.State.Fold.Title = &transcript.Event{}
	}
	if p&hasTitleText != 0 && e.TitleText == nil {
		e.TitleText = new(string)
	}
}

// maxCacheBytes bounds the index cache file that is read (the cache of a
// 100,000-session store is a few tens of MiB).
const maxCacheBytes = 512 << 20

// resolveCachePath returns the cache file path, or "" when the index is
// memory only (NoCache, no cache directory, or a cache directory inside
// the store root). Inside is decided on the paths with and without
// symlinks resolved, so a cache directory that reaches into the store
// through a symlink is refused too.
func (ix *Indexed) resolveCachePath() string {
	dir := ix.opts.CacheDir
	if dir == NoCache {
		return ""
	}
	if dir == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			ix.logf("sessionstore: no user cache directory (%v); index kept in memory", err)
			return ""
		}
		dir = filepath.Join(d, "dsh-lsp")
	}
	absDir, err1 := physicalAbs(dir)
	absRoot, err2 := physicalAbs(ix.root)
	if err1 != nil || err2 != nil {
		return ""
	}
	realDir, realRoot := resolveExisting(absDir), resolveExisting(absRoot)
	for _, pair := range [][2]string{{absRoot, absDir}, {realRoot, realDir}, {absRoot, realDir}, {realRoot, absDir}} {
		if isWithin(pair[0], pair[1]) {
			ix.logf("sessionstore: cache directory %s (%s) is inside the store root %s (%s); index kept in memory", absDir, realDir, absRoot, realRoot)
			return ""
		}
	}
	sum := sha256.Sum256([]byte(absRoot + "\x00" + fmt.Sprint(ix.opts.Encoding)))
	return filepath.Join(absDir, "index-"+hex.EncodeToString(sum[:12])+".bin")
}

// isWithin reports whether path is root or below it (lexically).
func isWithin(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// resolveExisting resolves the symlinks of the longest existing prefix of
// the absolute path p and appends the rest (a cache directory need not
// exist yet; MkdirAll would create it through the links).
func resolveExisting(p string) string {
	rest := ""
	for cur := p; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// loadCache reads the persisted index, if valid, into ix. Only a regular
// file of at most maxCacheBytes is read (readRegularFile): a FIFO or
// /dev/zero planted there cannot hang or exhaust the server.
func (ix *Indexed) loadCache() error {
	data, err := readRegularFile(ix.cachePath, maxCacheBytes)
	if err != nil {
		return err
	}
	cf, err := decodeCache(data)
	if err != nil {
		return err
	}
	absRoot, _ := filepath.Abs(ix.root)
	if cf.Root != absRoot || cf.Pinned != ix.opts.Encoding {
		return fmt.Errorf("cache is for another root (%s)", cf.Root)
	}
	decoded := deriveAll(cf.Entries, ix.limit)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.dirty = ix.dirty || decoded
	for _, e := range cf.Entries {
		if e != nil {
			ix.entries[e.Proj+"/"+e.Seg] = e
		}
	}
	ix.rebuildListing()
	return nil
}

func decodeCache(data []byte) (*cacheFile, error) {
	if len(data) < len(cacheMagic)+8 || string(data[:len(cacheMagic)]) != cacheMagic {
		return nil, errors.New("not an index cache file")
	}
	if v := binary.LittleEndian.Uint32(data[len(cacheMagic):]); v != cacheVersion {
		return nil, fmt.Errorf("index cache version %d, want %d", v, cacheVersion)
	}
	body := data[len(cacheMagic)+4 : len(data)-4]
	if crc32.ChecksumIEEE(body) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return nil, errors.New("index cache checksum mismatch")
	}
	var cf cacheFile
	if err := gob.NewDecoder(bytes.NewReader(body)).Decode(&cf); err != nil {
		return nil, fmt.Errorf("index cache does not decode: %w", err)
	}
	if len(cf.Present) != len(cf.Entries) {
		return nil, fmt.Errorf("index cache has %d presence records for %d entries", len(cf.Present), len(cf.Entries))
	}
	for i, e := range cf.Entries {
		if e != nil {
			cf.Present[i].restore(e)
		}
	}
	return &cf, nil
}

// persist writes the index when it changed (force: however recently it
// was written). Failures are logged.
func (ix *Indexed) persist(force bool) {
	if ix.cachePath == "" {
		return
	}
	ix.mu.Lock()
	if !ix.dirty || !ix.complete || (!force && time.Since(ix.lastPersist) < persistEvery) {
		ix.mu.Unlock()
		return
	}
	absRoot, _ := filepath.Abs(ix.root)
	cf := cacheFile{Root: absRoot, Pinned: ix.opts.Encoding, Entries: make([]*entry, 0, len(ix.entries)), Present: make([]presence, 0, len(ix.entries))}
	for _, e := range ix.entries {
		p := *e
		if e.view != e.State {
			// The view holds a torn final frame: parse again after a restart.
			p.Sig.Size = -1
		}
		cf.Entries = append(cf.Entries, &p)
		cf.Present = append(cf.Present, presenceOf(&p))
	}
	ix.dirty = false
	ix.lastPersist = time.Now()
	ix.mu.Unlock()
	if err := writeCache(ix.cachePath, &cf); err != nil {
		ix.logf("sessionstore: cannot write index cache %s: %v", ix.cachePath, err)
		ix.mu.Lock()
		ix.dirty = true
		ix.mu.Unlock()
	}
}

func writeCache(path string, cf *cacheFile) error {
	buf := bytes.NewBuffer(binary.LittleEndian.AppendUint32([]byte(cacheMagic), cacheVersion))
	if err := gob.NewEncoder(buf).Encode(cf); err != nil {
		return err
	}
	data := binary.LittleEndian.AppendUint32(buf.Bytes(), crc32.ChecksumIEEE(buf.Bytes()[len(cacheMagic)+4:]))
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".index-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err := errors.Join(err, tmp.Close()); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// deriveAll derives the entries loaded from the cache on every core (every
// restart and CLI run pays for it before its first answer). An error
// remembered under another read limit is dropped, so the entry is parsed
// again. It reports whether a title was decoded that the cache could keep.
func deriveAll(entries []*entry, limit int64) (decoded bool) {
	var n atomic.Int64
	forEachParallel(len(entries), min(runtime.GOMAXPROCS(0), len(entries)/512+1), func(i int) {
		e := entries[i]
		if e == nil {
			return
		}
		if e.ReadErr.Limit && e.ReadErrLimit != limit {
			e.ReadErr, e.ReadErrLimit, e.Sig.Size = transcript.SavedError{}, 0, -1
		}
		had := e.TitleDerived
		e.derive(e.State)
		if !had && e.TitleDerived {
			n.Add(1)
		}
	})
	return n.Load() > 0
}
