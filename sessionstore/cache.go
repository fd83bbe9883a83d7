package sessionstore

import (
	"bufio"
	"bytes"
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
	"sync"
	"sync/atomic"
	"time"

	"github.com/dsh-lsp/dsh-lsp/internal/beneath"
	"github.com/dsh-lsp/dsh-lsp/internal/binenc"
	"github.com/dsh-lsp/dsh-lsp/internal/hugepage"
	"github.com/dsh-lsp/dsh-lsp/internal/parallel"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript"
)

// The persisted index is one file per store root in the cache directory:
//
//	"DSHLSPIX" | uint32 version | states | head | search index |
//	uint32 CRC-32C of head | uint64 offset of head | uint64 length of the search index |
//	uint32 CRC-32C of the search index | uint64 offset of the marks in the head
//
// states: the entries' parse states, each as it is kept (logState.encode),
// back to back in key order. head: the root and pinned encoding, a table
// of the project and cwd strings, the entries in key order (varint fields;
// of its state, the length and CRC-32C), the listing as entry positions,
// the store's shape, the marks (where every entriesPerMark-th entry and its
// state begin, so that the entries decode on every core) and the search
// index's length. The catalog's trigram index follows the head and is read
// into a buffer of its own: once the catalog has decoded it, it is garbage
// (11 MB at 100,000 sessions), while the rest of the head stays, the
// entries' strings sharing its bytes. A restart reads the head and takes
// the entries and both orders as they are: nothing is sorted, re-derived
// or decoded beyond the entries' own fields, and a state is read from the
// file when it is used (savedState). The file is written to a temporary
// file in the cache directory and renamed into place. A missing,
// foreign-version, corrupt or other-root file is ignored and the index is
// rebuilt. Nothing is ever written under the store root.

const (
	cacheMagic   = "DSHLSPIX"
	cacheVersion = 11
	// cachePrefixBytes and cacheTrailerBytes frame the states and the head.
	cachePrefixBytes  = len(cacheMagic) + 4
	cacheTrailerBytes = 4 + 8 + 8 + 4 + 8
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
	// states is where the entries' states lie.
	states *stateSection
	// searchLen is the search index's length the head records, -1 for
	// none.
	searchLen int64
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
	// flagIDInRaw: ListedID is written as its place in ListedRaw, whose
	// bytes it then shares after a restart; flagSegIsID: Seg is ListedID.
	// Together they keep 72 of the 385 bytes a session's header took in a
	// loaded cache.
	flagIDInRaw
	flagSegIsID
	// flagWhole: Whole, and Sum follows the signature.
	flagWhole
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
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(binary.LittleEndian.AppendUint32([]byte(cacheMagic), cacheVersion))
	states := make([]writtenState, len(all))
	headAt := uint64(cachePrefixBytes)
	for i, e := range all {
		states[i] = writeState(bw, e.State)
		headAt += uint64(states[i].n)
	}
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
	crc := crc32.New(castagnoli)
	head := &countingWriter{w: io.MultiWriter(bw, crc)}
	b := binenc.AppendString(nil, root)
	b = binenc.AppendUint(b, uint64(pinned))
	b = binenc.AppendUint(b, uint64(len(table)))
	for _, s := range table {
		b = binenc.AppendString(b, s)
	}
	b = binenc.AppendUint(b, uint64(len(all)))
	var marks []entryMark
	var stateAt int64
	for i, e := range all {
		if i%entriesPerMark == 0 {
			marks = append(marks, entryMark{at: head.n + int64(len(b)), stateAt: stateAt})
		}
		_, isListed := pos[e]
		b = appendEntry(b, e, str, isListed && readBy(e.ListedID) == e, states[i])
		if states[i].present {
			stateAt += int64(states[i].n)
		}
		if len(b) >= 32<<10 {
			head.Write(b)
			b = b[:0]
		}
	}
	marks = append(marks, entryMark{at: head.n + int64(len(b)), stateAt: stateAt})
	b = appendListingAndShape(b, listed, pos, shape)
	marksAt := head.n + int64(len(b))
	head.Write(appendMarks(b, marks, searchIndex))
	bw.Write(searchIndex)
	trailer := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint32(nil, crc.Sum32()), headAt)
	trailer = binary.LittleEndian.AppendUint64(trailer, uint64(len(searchIndex)))
	trailer = binary.LittleEndian.AppendUint32(trailer, crc32.Checksum(searchIndex, castagnoli))
	bw.Write(binary.LittleEndian.AppendUint64(trailer, uint64(marksAt)))
	return bw.Flush()
}

// appendListingAndShape appends the listing, as the positions pos gives
// its entries, and the store's shape.
func appendListingAndShape(b []byte, listed []*entry, pos map[*entry]int, shape storeShape) []byte {
	b = binenc.AppendUint(b, uint64(len(listed)))
	for _, e := range listed {
		b = binenc.AppendUint(b, uint64(pos[e]))
	}
	b = binenc.AppendUint(binenc.AppendInt(b, shape.root), uint64(len(shape.projects)))
	for _, p := range slices.Sorted(maps.Keys(shape.projects)) {
		b = binenc.AppendInt(binenc.AppendString(b, p), shape.projects[p])
	}
	return b
}

// appendMarks appends the marks and the search index's length, the end of
// the head.
func appendMarks(b []byte, marks []entryMark, searchIndex []byte) []byte {
	b = binenc.AppendUint(b, uint64(len(marks)))
	for _, m := range marks {
		b = binenc.AppendUint(binenc.AppendUint(b, uint64(m.at)), uint64(m.stateAt))
	}
	if searchIndex == nil {
		return append(b, 0)
	}
	return binenc.AppendUint(append(b, 1), uint64(len(searchIndex)))
}

// writtenState is what the head records of a state written to the state
// section: its length and CRC-32C; lost when the entry had one that could
// not be read back from the loaded cache (the entry is then parsed again
// after a restart).
type writtenState struct {
	present, lost bool
	n, sum        uint32
}

// writeState writes s's bytes to w.
func writeState(w io.Writer, s savedState) writtenState {
	if !s.present() {
		return writtenState{}
	}
	b, err := s.bytes()
	if err != nil {
		return writtenState{lost: true}
	}
	w.Write(b)
	ws := writtenState{present: true, n: uint32(len(b)), sum: s.sum}
	if s.in == nil {
		ws.sum = crc32.Checksum(b, castagnoli)
	}
	return ws
}

// minEntryBytes is the fewest bytes appendEntry writes: the bound on the
// entry count a cache of a given size can claim, so that a damaged or
// forged count cannot make decodeCache allocate more than a few dozen
// times the file's size.
const minEntryBytes = 18

func appendEntry(b []byte, e *entry, str func(string) uint64, readByListedID bool, state writtenState) []byte {
	sig, whole := e.Sig, e.Whole
	if e.torn() != nil || state.lost {
		// The view holds a torn final frame, or the state was lost: parse
		// again after a restart.
		sig.Size, whole = -1, false
	}
	readIDIsListed := e.ReadID == e.ListedID
	idAt := -1
	if e.ListedID != "" {
		idAt = bytes.Index(e.ListedRaw, []byte(e.ListedID))
	}
	b = binenc.AppendUint(b, flagIf(idAt >= 0, flagIDInRaw)|flagIf(e.Seg == e.ListedID, flagSegIsID)|
		flagIf(e.HasRaw, flagHasRaw)|flagIf(e.HasZstd, flagHasZstd)|
		flagIf(e.NoHeaderYet, flagNoHeaderYet)|flagIf(e.Listed, flagListed)|flagIf(e.IdentityOK, flagIdentityOK)|
		flagIf(e.TitleDerived, flagTitleDerived)|flagIf(e.Clean && e.torn() == nil, flagClean)|
		flagIf(e.ListedCWD != nil, flagCWD)|flagIf(e.TitleText != nil, flagTitle)|
		flagIf(readIDIsListed, flagReadIDIsListed)|flagIf(e.HeaderFromListed, flagHeaderFromListed)|
		flagIf(readByListedID, flagReadByListedID)|flagIf(whole, flagWhole))
	b = binenc.AppendUint(b, str(e.Proj))
	b = binenc.AppendUint(b, uint64(e.Enc))
	b = binenc.AppendUint(binenc.AppendUint(b, sig.Dev), sig.Ino)
	b = binenc.AppendInt(binenc.AppendInt(b, sig.Size), sig.MtimeNs)
	if whole {
		b = binary.LittleEndian.AppendUint32(b, e.Sum)
	}
	b = binenc.AppendInt(transcript.AppendSavedError(b, e.fault().ReadErr), e.fault().ReadErrLimit)
	b = binenc.AppendOptBytes(binenc.AppendInt(b, e.ListedCreatedAt), e.ListedRaw)
	if idAt >= 0 {
		b = binenc.AppendUint(binenc.AppendUint(b, uint64(idAt)), uint64(len(e.ListedID)))
	} else {
		b = binenc.AppendString(b, e.ListedID)
	}
	if e.Seg != e.ListedID {
		b = binenc.AppendString(b, e.Seg)
	}
	if e.ListedCWD != nil {
		b = binenc.AppendUint(b, str(*e.ListedCWD))
	}
	if !readIDIsListed {
		b = binenc.AppendString(b, e.ReadID)
	}
	b = binenc.AppendOptBytes(b, e.HeaderLine)
	if e.TitleText != nil {
		b = binenc.AppendString(b, *e.TitleText)
	}
	if !state.present {
		return binenc.AppendUint(b, 0)
	}
	return binary.LittleEndian.AppendUint32(binenc.AppendUint(b, uint64(state.n)+1), state.sum)
}

// decodeCache reads a cache file held in memory. The entries' byte and
// string fields, and their states, alias data, which must not be modified.
func decodeCache(data []byte) (*cacheFile, error) {
	return decodeCacheParts(int64(len(data)), func(from, to int64, _ bool) ([]byte, error) { return data[from:to], nil },
		func(base, size int64) *stateSection { return bytesSection(data[base : base+size]) })
}

// decodeCacheParts reads a cache file of size bytes whose parts read
// gives (read may be called from two goroutines at once; kept says the
// part is kept as long as the index: the head); states gives
// the state section of size bytes at base. Only the head is read whole.
// The search index is read and checked on another goroutine while the
// head is read and decoded: a restart's first answer waits for the load,
// and on two cores the two take little more than the head alone.
func decodeCacheParts(size int64, read func(from, to int64, kept bool) ([]byte, error), states func(base, size int64) *stateSection) (*cacheFile, error) {
	t, err := readFrame(size, read)
	if err != nil {
		return nil, err
	}
	type searchRead struct {
		data []byte
		err  error
	}
	searched := make(chan searchRead, 1)
	go func() {
		data, err := read(t.searchAt, t.searchEnd, false)
		if err == nil && crc32.Checksum(data, castagnoli) != t.searchSum {
			err = errors.New("index cache search index checksum mismatch")
		}
		searched <- searchRead{data, err}
	}()
	head, err := read(t.headAt, t.searchAt, true)
	if err != nil {
		<-searched
		return nil, err
	}
	// Decoded before the checksum is known, which costs nothing here: a
	// decode checks every length and count, and a mismatch discards it.
	cf, decodeErr := decodeHead(head, int(t.marksAt), states(int64(cachePrefixBytes), t.headAt-int64(cachePrefixBytes)))
	search := <-searched
	switch {
	case crc32.Checksum(head, castagnoli) != t.headSum:
		return nil, errors.New("index cache checksum mismatch")
	case search.err != nil:
		return nil, search.err
	case decodeErr != nil:
		return nil, decodeErr
	}
	if !takeSearchIndex(cf, search.data) {
		return nil, errors.New("index cache search index length mismatch")
	}
	return cf, nil
}

// cacheFrame is where a cache file's parts lie, from its prefix and
// trailer: the head from headAt to searchAt, its marks at marksAt within
// it, the search index from searchAt to searchEnd; and their checksums.
type cacheFrame struct {
	headAt, searchAt, searchEnd, marksAt int64
	headSum, searchSum                   uint32
}

// readFrame reads and checks the prefix and trailer of a cache file of
// size bytes whose parts read gives.
func readFrame(size int64, read func(from, to int64, kept bool) ([]byte, error)) (cacheFrame, error) {
	if size < int64(cachePrefixBytes+cacheTrailerBytes) {
		return cacheFrame{}, errors.New("not an index cache file")
	}
	prefix, err := read(0, int64(cachePrefixBytes), false)
	if err != nil {
		return cacheFrame{}, err
	}
	if string(prefix[:len(cacheMagic)]) != cacheMagic {
		return cacheFrame{}, errors.New("not an index cache file")
	}
	if v := binary.LittleEndian.Uint32(prefix[len(cacheMagic):]); v != cacheVersion {
		return cacheFrame{}, fmt.Errorf("index cache version %d, want %d", v, cacheVersion)
	}
	trailer, err := read(size-cacheTrailerBytes, size, false)
	if err != nil {
		return cacheFrame{}, err
	}
	le := binary.LittleEndian
	headAt, searchLen, marksAt := le.Uint64(trailer[4:]), le.Uint64(trailer[12:]), le.Uint64(trailer[24:])
	end := size - cacheTrailerBytes
	if headAt < uint64(cachePrefixBytes) || headAt > uint64(end) || searchLen > uint64(end)-headAt {
		return cacheFrame{}, errors.New("index cache head offset out of range")
	}
	t := cacheFrame{headAt: int64(headAt), searchAt: end - int64(searchLen), searchEnd: end, headSum: le.Uint32(trailer), searchSum: le.Uint32(trailer[20:])}
	if marksAt > uint64(t.searchAt-t.headAt) {
		return cacheFrame{}, errors.New("index cache marks offset out of range")
	}
	t.marksAt = int64(marksAt)
	return t, nil
}

// entriesPerMark is how many entries lie between two marks of the head:
// a load decodes the entries in runs of marks, one per core.
const entriesPerMark = 4096

// entryMark is where an entry lies: its offset in the head, and that of
// its state in the state section.
type entryMark struct{ at, stateAt int64 }

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// decodeHead reads a cache file's head, whose entries' states lie in
// states and whose marks begin at marksAt. The entries' byte and string
// fields alias head. The entries are decoded in parts, one per processor,
// each from a mark to a later one.
func decodeHead(head []byte, marksAt int, states *stateSection) (*cacheFile, error) {
	r := binenc.NewReader(head)
	cf := &cacheFile{Root: r.String(), Pinned: Encoding(r.Uint()), states: states}
	table := make([]string, r.Count(1))
	for i := range table {
		table[i] = r.StringAlias()
	}
	n := r.Count(minEntryBytes)
	entriesAt := int64(len(head) - r.Len())
	tail := binenc.NewReader(head[marksAt:])
	marks := make([]entryMark, tail.Count(2))
	for i := range marks {
		marks[i] = entryMark{at: int64(tail.Uint()), stateAt: int64(tail.Uint())}
	}
	if r.Err() != nil || tail.Err() != nil || !marksFit(marks, n, entriesAt, int64(marksAt), states.r.Size()) {
		return nil, errors.New("index cache does not decode")
	}
	cf.Entries = make([]*entry, n)
	block := hugepage.Make[entry](n)
	runs := len(marks) - 1
	var failed atomic.Bool
	parallel.Parts(runs, 1, func(lo, hi int) {
		first, last := lo*entriesPerMark, min(hi*entriesPerMark, n)
		if !decodeEntries(head[marks[lo].at:marks[hi].at], table, block[first:last], cf.Entries[first:last], states, marks[lo].stateAt, marks[hi].stateAt) {
			failed.Store(true)
		}
	})
	if failed.Load() {
		return nil, errors.New("index cache entry does not decode")
	}
	r = binenc.NewReader(head[marks[runs].at:marksAt])
	cf.Listed = make([]int, r.Count(1))
	for i := range cf.Listed {
		if cf.Listed[i] = int(r.Uint()); cf.Listed[i] >= n {
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
	if r.Err() != nil || r.Len() != 0 || !readSearchIndexLength(tail, cf) || tail.Len() != 0 {
		return nil, errors.New("index cache does not decode")
	}
	return cf, nil
}

// marksFit reports whether marks locate n entries written from entriesAt
// to at most end in the head, one mark every entriesPerMark entries and
// one after the last, their states filling a state section of
// stateBytes.
func marksFit(marks []entryMark, n int, entriesAt, end, stateBytes int64) bool {
	if len(marks) != (n+entriesPerMark-1)/entriesPerMark+1 || marks[0] != (entryMark{at: entriesAt}) || marks[len(marks)-1].stateAt != stateBytes {
		return false
	}
	for i := 1; i < len(marks); i++ {
		if marks[i].at < marks[i-1].at || marks[i].stateAt < marks[i-1].stateAt {
			return false
		}
	}
	return marks[len(marks)-1].at <= end
}

// decodeEntries decodes the entries encoded in b into block, pointing
// entries at them; their states lie from stateAt to stateEnd in states.
func decodeEntries(b []byte, table []string, block []entry, entries []*entry, states *stateSection, stateAt, stateEnd int64) bool {
	r := binenc.NewReader(b)
	// The entries of one cwd share a pointer to it (ListedCWD).
	str := func() (*string, bool) {
		i := r.Uint()
		if i >= uint64(len(table)) {
			return nil, false
		}
		return &table[i], true
	}
	// The titles' string headers, allocated once: one allocation each
	// was a tenth of a restart's decoding at 100,000 sessions.
	titles := make([]string, len(block))
	for i := range block {
		e := &block[i]
		if !readEntry(r, e, str, &titles[i]) || !placeState(r, &e.State, states, &stateAt) {
			return false
		}
		entries[i] = e
	}
	return r.Len() == 0 && stateAt == stateEnd
}

// placeState reads the length and sum of an entry's state into s, which
// then lies at *at in states; *at moves past it.
func placeState(r *binenc.Reader, s *savedState, states *stateSection, at *int64) bool {
	n := r.Uint()
	if n == 0 {
		return r.Err() == nil
	}
	n--
	if n > uint64(states.r.Size()-*at) {
		return false
	}
	*s = savedState{in: states, off: *at, n: uint32(n), sum: r.Uint32LE()}
	*at += int64(n)
	return r.Err() == nil
}

// stateSection is where parse states lie: a section of a loaded cache
// file, kept open (where a later write's rename does not change what an
// open file reads), of the spill file, or of bytes held in memory.
type stateSection struct {
	r *io.SectionReader
	// file is the file r reads, closed with the section; nil for bytes.
	file beneath.File
}

// fileSection is the section of n bytes at base of f.
func fileSection(f beneath.File, base, n int64) *stateSection {
	return &stateSection{r: io.NewSectionReader(f, base, n), file: f}
}

// bytesSection is a section held in memory.
func bytesSection(data []byte) *stateSection {
	return &stateSection{r: io.NewSectionReader(bytes.NewReader(data), 0, int64(len(data)))}
}

// read returns the n bytes at off in the section, checked against sum.
func (s *stateSection) read(off int64, n, sum uint32) ([]byte, error) {
	b := make([]byte, n)
	// An empty state may lie at the section's end, where ReadAt says EOF.
	if _, err := s.r.ReadAt(b, off); err != nil && n > 0 {
		return nil, fmt.Errorf("reading a state from the index cache: %w", err)
	}
	if crc32.Checksum(b, castagnoli) != sum {
		return nil, errStateEncoding
	}
	return b, nil
}

// head returns the first stateTailBytes of the n bytes at off in the
// section, unchecked; nil when they cannot be read.
func (s *stateSection) head(off int64, n uint32) []byte {
	if n < stateTailBytes {
		return nil
	}
	b := make([]byte, stateTailBytes)
	if _, err := s.r.ReadAt(b, off); err != nil {
		return nil
	}
	return b
}

// close closes the cache file the section reads from, if any.
func (s *stateSection) close() {
	if s != nil && s.file != nil {
		s.file.Close()
	}
}

// readSearchIndexLength reads the head's last field, the length of the
// search index that follows the head (written as OptBytes without its
// bytes), into cf.searchLen: -1 when there is none.
func readSearchIndexLength(r *binenc.Reader, cf *cacheFile) bool {
	switch r.Uint() {
	case 0:
		cf.searchLen = -1
		return r.Err() == nil
	case 1:
		cf.searchLen = int64(r.Uint())
		return r.Err() == nil
	}
	return false
}

// takeSearchIndex gives cf the search index read after its head, when it
// has the length the head recorded.
func takeSearchIndex(cf *cacheFile, searchIndex []byte) bool {
	if cf.searchLen < 0 {
		return len(searchIndex) == 0
	}
	cf.SearchIndex = searchIndex
	return cf.searchLen == int64(len(searchIndex))
}

// readEntry reads an entry appendEntry wrote into e; str reads a string
// of the table, and a title is read into *title, which e then points to.
func readEntry(r *binenc.Reader, e *entry, str func() (*string, bool), title *string) bool {
	flags := r.Uint()
	proj, ok := str()
	if ok {
		e.Proj = *proj
	}
	e.HasRaw, e.HasZstd = flags&flagHasRaw != 0, flags&flagHasZstd != 0
	e.NoHeaderYet, e.Listed, e.IdentityOK = flags&flagNoHeaderYet != 0, flags&flagListed != 0, flags&flagIdentityOK != 0
	e.TitleDerived, e.Clean = flags&flagTitleDerived != 0, flags&flagClean != 0
	e.Enc = Encoding(r.Uint())
	e.Sig = fileSig{Dev: r.Uint(), Ino: r.Uint(), Size: r.Int(), MtimeNs: r.Int()}
	if e.Whole = flags&flagWhole != 0; e.Whole {
		if sum := r.Fixed(4); sum != nil {
			e.Sum = binary.LittleEndian.Uint32(sum)
		}
	}
	e.setFaults(faults{ReadErr: transcript.ReadSavedError(r), ReadErrLimit: r.Int()})
	e.ListedCreatedAt, e.ListedRaw = r.Int(), r.OptBytes()
	if flags&flagIDInRaw != 0 {
		at, n := r.Uint(), r.Uint()
		if at > uint64(len(e.ListedRaw)) || n == 0 || n > uint64(len(e.ListedRaw))-at {
			return false
		}
		e.ListedID = binenc.Alias(e.ListedRaw[at : at+n])
	} else {
		e.ListedID = r.StringAlias()
	}
	e.Seg = e.ListedID
	if flags&flagSegIsID == 0 {
		e.Seg = r.StringAlias()
	}
	if flags&flagCWD != 0 {
		cwd, found := str()
		e.ListedCWD, ok = cwd, ok && found
	}
	e.ReadID, e.HeaderFromListed = e.ListedID, flags&flagHeaderFromListed != 0
	e.readByListedID = flags&flagReadByListedID != 0
	if flags&flagReadIDIsListed == 0 {
		e.ReadID = r.StringAlias()
	}
	e.HeaderLine = r.OptBytes()
	if flags&flagTitle != 0 {
		*title = r.StringAlias()
		e.TitleText = title
	}
	return ok && r.Err() == nil
}

// maxCacheBytes bounds the index cache file that is read (the cache of a
// 100,000-session store is a few tens of MiB).
const maxCacheBytes = 512 << 20

// resolveCachePath returns the cache file path, or "" when the index is
// memory only (NoCache, no cache directory, or a cache directory inside
// the store root, beneath.Inside).
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
	absDir, absRoot, inside, err := beneath.Inside(dir, ix.root)
	if err != nil {
		return ""
	}
	if inside {
		ix.logf("sessionstore: cache directory %s (%s) is inside the store root %s (%s); index kept in memory", absDir, beneath.Resolved(absDir), absRoot, beneath.Resolved(absRoot))
		return ""
	}
	sum := sha256.Sum256([]byte(absRoot + "\x00" + fmt.Sprint(ix.opts.Encoding)))
	return filepath.Join(absDir, "index-"+hex.EncodeToString(sum[:12])+".bin")
}

// loadCache reads the persisted index (readCacheFile), if valid, into ix.
func (ix *Indexed) loadCache() error {
	cf, err := readCacheFile(ix.cachePath)
	if err != nil {
		return err
	}
	absRoot, _ := filepath.Abs(ix.root)
	if cf.Root != absRoot || cf.Pinned != ix.opts.Encoding {
		cf.states.close()
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
	ix.setListing(cf.Entries, listed, true)
	ix.cachedShape, ix.cachedSearchIndex, ix.cachedGen = cf.Shape, cf.SearchIndex, ix.gen
	ix.cachedStates = cf.states
	return nil
}

// readCacheFile reads the cache file at path (at most maxCacheBytes:
// beneath.OpenRegular): its head, and its states when they are used. The
// file is kept open for them, except on Windows, where an open file
// would keep the next write from replacing it: there it is read whole.
func readCacheFile(path string) (*cacheFile, error) {
	if runtime.GOOS == "windows" {
		data, err := beneath.ReadRegular(path, maxCacheBytes)
		if err != nil {
			return nil, err
		}
		return decodeCache(data)
	}
	f, size, err := beneath.OpenRegular(path, maxCacheBytes)
	if err != nil {
		return nil, err
	}
	read := func(from, to int64, kept bool) ([]byte, error) { return beneath.ReadRange(f, path, from, to, kept) }
	cf, err := decodeCacheParts(size, read, func(base, n int64) *stateSection { return fileSection(f, base, n) })
	if err != nil {
		f.Close()
		return nil, err
	}
	return cf, nil
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
	if ix.opts.persistGate != nil {
		<-ix.opts.persistGate
	}
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
	parallel.Parts(len(entries), parallelEntries, func(lo, hi int) {
		for _, e := range entries[lo:hi] {
			if f := e.fault(); f.ReadErr.Limit && f.ReadErrLimit != limit {
				e.faults, e.Sig.Size = nil, -1
			}
			was := e.Clean
			e.restore()
			if !was && e.Clean {
				n.Add(1)
			}
		}
	})
	return n.Load() > 0
}
