package sessionstore

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dsh-lsp/dsh-lsp/internal/binenc"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript"
)

// The persisted index is one file per store root in the cache directory:
//
//	"DSHLSPIX" | uint32 version | body | uint32 CRC-32C of the body
//
// body: the root and pinned encoding, a table of the project and cwd
// strings, the entries in key order (varint fields, each parse state as
// the bytes it is kept in), and the listing as entry positions. A restart
// takes the entries and both orders as they are: nothing is sorted,
// re-derived or decoded beyond the entries' own fields. The file is
// written to a temporary file in the cache directory and renamed into
// place. A missing, foreign-version, corrupt or other-root file is ignored
// and the index is rebuilt. Nothing is ever written under the store root.

const (
	cacheMagic   = "DSHLSPIX"
	cacheVersion = 7
	// persistEvery bounds how often background refreshes rewrite the
	// cache file.
	persistEvery = 30 * time.Second
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// cacheFile is a decoded cache: the entries in key order and the listing
// as their positions.
type cacheFile struct {
	Root    string
	Pinned  Encoding
	Entries []*entry
	Listed  []int
	Shape   storeShape
	// SearchIndex is the catalog's trigram index when the cache was
	// written (reference.Catalog.MarshalSearchIndex), or nil.
	SearchIndex []byte
}

// Entry flags: the booleans, and which optional fields are present (nil
// and empty are kept apart: dsh labels an empty title differently from
// none).
const (
	flagHasRaw = 1 << iota
	flagHasZstd
	flagNoHeaderYet
	flagListed
	flagIdentityOK
	flagTitleDerived
	flagClean
	flagCWD
	flagTitle
	flagReadIDIsListed
	flagHeaderFromListed
	flagReadByListedID
)

func flagIf(cond bool, f uint64) uint64 {
	if cond {
		return f
	}
	return 0
}

// writeCacheTo writes the cache file of the entries all (in key order),
// the listing's entries listed, the store's shape and the catalog's search
// index, for root and the pinned encoding, to w, one entry at a time: the
// file of a large store (100 MB at 100,000 sessions) is never held whole.
// readBy gives the entry a read of an id loads in that listing: a listed
// entry it gives for its own id is flagged so (entry.readByListedID).
func writeCacheTo(w io.Writer, root string, pinned Encoding, all, listed []*entry, readBy func(id string) *entry, shape storeShape, searchIndex []byte) error {
	strs := map[string]uint64{}
	var table []string
	str := func(s string) uint64 {
		i, ok := strs[s]
		if !ok {
			i = uint64(len(table))
			strs[s] = i
			table = append(table, s)
		}
		return i
	}
	pos := make(map[*entry]int, len(listed))
	for _, e := range listed {
		pos[e] = -1
	}
	for i, e := range all {
		if _, ok := pos[e]; ok {
			pos[e] = i
		}
		str(e.Proj)
		if e.ListedCWD != nil {
			str(*e.ListedCWD)
		}
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	crc := crc32.New(castagnoli)
	body := io.MultiWriter(bw, crc)
	b := binary.LittleEndian.AppendUint32([]byte(cacheMagic), cacheVersion)
	bw.Write(b)
	b = binenc.AppendString(b[:0], root)
	b = binenc.AppendUint(b, uint64(pinned))
	b = binenc.AppendUint(b, uint64(len(table)))
	for _, s := range table {
		b = binenc.AppendString(b, s)
	}
	b = binenc.AppendUint(b, uint64(len(all)))
	for _, e := range all {
		_, isListed := pos[e]
		b = appendEntry(b, e, str, isListed && readBy(e.ListedID) == e)
		if len(b) >= 32<<10 {
			body.Write(b)
			b = b[:0]
		}
	}
	b = binenc.AppendUint(b, uint64(len(listed)))
	for _, e := range listed {
		b = binenc.AppendUint(b, uint64(pos[e]))
	}
	b = binenc.AppendUint(binenc.AppendInt(b, shape.root), uint64(len(shape.projects)))
	for _, p := range slices.Sorted(maps.Keys(shape.projects)) {
		b = binenc.AppendInt(binenc.AppendString(b, p), shape.projects[p])
	}
	body.Write(b)
	if searchIndex == nil {
		body.Write([]byte{0})
	} else {
		body.Write(binenc.AppendUint([]byte{1}, uint64(len(searchIndex))))
		body.Write(searchIndex)
	}
	bw.Write(binary.LittleEndian.AppendUint32(nil, crc.Sum32()))
	return bw.Flush()
}

// minEntryBytes is the fewest bytes appendEntry writes: the bound on the
// entry count a cache of a given size can claim, so that a damaged or
// forged count cannot make decodeCache allocate more than a few dozen
// times the file's size.
const minEntryBytes = 19

func appendEntry(b []byte, e *entry, str func(string) uint64, readByListedID bool) []byte {
	sig := e.Sig
	if e.torn != nil {
		// The view holds a torn final frame: parse again after a restart.
		sig.Size = -1
	}
	readIDIsListed := e.ReadID == e.ListedID
	b = binenc.AppendUint(b, flagIf(e.HasRaw, flagHasRaw)|flagIf(e.HasZstd, flagHasZstd)|
		flagIf(e.NoHeaderYet, flagNoHeaderYet)|flagIf(e.Listed, flagListed)|flagIf(e.IdentityOK, flagIdentityOK)|
		flagIf(e.TitleDerived, flagTitleDerived)|flagIf(e.Clean && e.torn == nil, flagClean)|
		flagIf(e.ListedCWD != nil, flagCWD)|flagIf(e.TitleText != nil, flagTitle)|
		flagIf(readIDIsListed, flagReadIDIsListed)|flagIf(e.HeaderFromListed, flagHeaderFromListed)|
		flagIf(readByListedID, flagReadByListedID))
	b = binenc.AppendString(binenc.AppendUint(b, str(e.Proj)), e.Seg)
	b = binenc.AppendUint(b, uint64(e.Enc))
	b = binenc.AppendUint(binenc.AppendUint(b, sig.Dev), sig.Ino)
	b = binenc.AppendInt(binenc.AppendInt(b, sig.Size), sig.MtimeNs)
	b = binenc.AppendInt(transcript.AppendSavedError(b, e.ReadErr), e.ReadErrLimit)
	b = binenc.AppendString(b, e.ListedID)
	if e.ListedCWD != nil {
		b = binenc.AppendUint(b, str(*e.ListedCWD))
	}
	b = binenc.AppendOptBytes(binenc.AppendInt(b, e.ListedCreatedAt), e.ListedRaw)
	if !readIDIsListed {
		b = binenc.AppendString(b, e.ReadID)
	}
	b = binenc.AppendOptBytes(b, e.HeaderLine)
	if e.TitleText != nil {
		b = binenc.AppendString(b, *e.TitleText)
	}
	return binenc.AppendOptBytes(b, e.State)
}

// decodeCache reads a cache file. The entries' byte and string fields
// alias data, which must not be modified.
func decodeCache(data []byte) (*cacheFile, error) {
	if len(data) < len(cacheMagic)+8 || string(data[:len(cacheMagic)]) != cacheMagic {
		return nil, errors.New("not an index cache file")
	}
	if v := binary.LittleEndian.Uint32(data[len(cacheMagic):]); v != cacheVersion {
		return nil, fmt.Errorf("index cache version %d, want %d", v, cacheVersion)
	}
	body := data[len(cacheMagic)+4 : len(data)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return nil, errors.New("index cache checksum mismatch")
	}
	r := binenc.NewReader(body)
	cf := &cacheFile{Root: r.String(), Pinned: Encoding(r.Uint())}
	table := make([]string, r.Count(1))
	for i := range table {
		table[i] = r.StringAlias()
	}
	str := func() (string, bool) {
		i := r.Uint()
		if i >= uint64(len(table)) {
			return "", false
		}
		return table[i], true
	}
	cf.Entries = make([]*entry, r.Count(minEntryBytes))
	block := make([]entry, len(cf.Entries))
	for i := range cf.Entries {
		e := &block[i]
		if !readEntry(r, e, str) {
			return nil, errors.New("index cache entry does not decode")
		}
		cf.Entries[i] = e
	}
	cf.Listed = make([]int, r.Count(1))
	for i := range cf.Listed {
		if cf.Listed[i] = int(r.Uint()); cf.Listed[i] >= len(cf.Entries) {
			return nil, errors.New("index cache listing does not decode")
		}
	}
	cf.Shape.root = r.Int()
	nProjects := r.Count(2)
	cf.Shape.projects = make(map[string]int64, nProjects)
	for range nProjects {
		p := r.String()
		cf.Shape.projects[p] = r.Int()
	}
	cf.SearchIndex = r.OptBytes()
	if r.Err() != nil || r.Len() != 0 {
		return nil, errors.New("index cache does not decode")
	}
	return cf, nil
}

func readEntry(r *binenc.Reader, e *entry, str func() (string, bool)) bool {
	flags := r.Uint()
	proj, ok := str()
	e.Proj, e.Seg = proj, r.StringAlias()
	e.HasRaw, e.HasZstd = flags&flagHasRaw != 0, flags&flagHasZstd != 0
	e.NoHeaderYet, e.Listed, e.IdentityOK = flags&flagNoHeaderYet != 0, flags&flagListed != 0, flags&flagIdentityOK != 0
	e.TitleDerived, e.Clean = flags&flagTitleDerived != 0, flags&flagClean != 0
	e.Enc = Encoding(r.Uint())
	e.Sig = fileSig{Dev: r.Uint(), Ino: r.Uint(), Size: r.Int(), MtimeNs: r.Int()}
	e.ReadErr = transcript.ReadSavedError(r)
	e.ReadErrLimit = r.Int()
	e.ListedID = r.StringAlias()
	if flags&flagCWD != 0 {
		cwd, found := str()
		e.ListedCWD, ok = &cwd, ok && found
	}
	e.ListedCreatedAt, e.ListedRaw = r.Int(), r.OptBytes()
	e.ReadID, e.HeaderFromListed = e.ListedID, flags&flagHeaderFromListed != 0
	e.readByListedID = flags&flagReadByListedID != 0
	if flags&flagReadIDIsListed == 0 {
		e.ReadID = r.StringAlias()
	}
	e.HeaderLine = r.OptBytes()
	if flags&flagTitle != 0 {
		t := r.StringAlias()
		e.TitleText = &t
	}
	e.State = r.OptBytes()
	return ok && r.Err() == nil
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
	decoded := restoreAll(cf.Entries, ix.limit)
	listed := make([]*entry, len(cf.Listed))
	flagged := false
	for i, k := range cf.Listed {
		listed[i] = cf.Entries[k]
		flagged = flagged || listed[i].readByListedID
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	// A cache whose listed entries have no readByListedID flag was written
	// before there was one: written again, a restart on it needs no id
	// lookup before its first answer.
	ix.dirty = ix.dirty || decoded || len(listed) > 0 && !flagged
	// Built on first use (entryMap); nothing else runs during a load.
	ix.entries, ix.entriesFrom, ix.entriesOnce = nil, cf.Entries, sync.Once{}
	ix.setListing(cf.Entries, listed)
	ix.cachedShape, ix.cachedSearchIndex, ix.cachedGen = cf.Shape, cf.SearchIndex, ix.gen
	return nil
}

// persist writes the index when it changed (force: however recently it
// was written). Failures are logged.
func (ix *Indexed) persist(force bool) {
	if ix.cachePath == "" {
		return
	}
	ix.mu.Lock()
	if !ix.dirty || !ix.complete || ix.abandoned || (!force && time.Since(ix.lastPersist) < persistEvery) {
		ix.mu.Unlock()
		return
	}
	// Entries are replaced, never modified, once published; the slices
	// too: both are encoded outside the lock.
	all, listed, byID, shape, gen := ix.all, ix.listed, ix.byID, ix.shape, ix.gen
	ix.dirty = false
	ix.lastPersist = time.Now()
	ix.mu.Unlock()
	absRoot, _ := filepath.Abs(ix.root)
	searchIndex := ix.searchIndexToPersist(gen)
	write := func(w io.Writer) error {
		return writeCacheTo(w, absRoot, ix.opts.Encoding, all, listed, func(id string) *entry { return byID.find(ix, id) }, shape, searchIndex)
	}
	if err := writeCache(ix.cachePath, write); err != nil {
		ix.logf("sessionstore: cannot write index cache %s: %v", ix.cachePath, err)
		ix.mu.Lock()
		ix.dirty = true
		ix.mu.Unlock()
	}
}

// writeCache writes the cache file at path: to a temporary file in its
// directory, renamed into place once complete.
func writeCache(path string, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".index-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	err = write(tmp)
	if err := errors.Join(err, tmp.Close()); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// restoreAll derives the entries loaded from the cache (restore) on every
// core. An error remembered under another read limit is dropped, so the
// entry is parsed again. It reports whether an entry became Clean, which
// the cache should keep.
func restoreAll(entries []*entry, limit int64) (derived bool) {
	var n atomic.Int64
	forEachParallel(len(entries), min(runtime.GOMAXPROCS(0), len(entries)/4096+1), func(i int) {
		e := entries[i]
		if e.ReadErr.Limit && e.ReadErrLimit != limit {
			e.ReadErr, e.ReadErrLimit, e.Sig.Size = transcript.SavedError{}, 0, -1
		}
		was := e.Clean
		e.restore()
		if !was && e.Clean {
			n.Add(1)
		}
	})
	return n.Load() > 0
}
