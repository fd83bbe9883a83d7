package reference

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/cespare/xxhash/v2"
	"github.com/dsh-lsp/dsh-lsp/internal/binenc"
	"github.com/dsh-lsp/dsh-lsp/internal/parallel"
	"golang.org/x/text/cases"
)

// SearchIndexVersion is the version of the encoding MarshalSearchIndex
// writes; UnmarshalSearchIndex accepts only this one. A cache that
// persists the encoding can key its own format on it.
const SearchIndexVersion = 2

// searchIndexMagic starts every encoded search index.
const searchIndexMagic = "DSHCATSI"

// checksum64 is the encoding's checksum: xxHash-64, which runs at memory
// speed (CRC-64 took 60 ms over the 12 MB a fingerprint of 100,000
// sessions covers).
func checksum64(b []byte) uint64 { return xxhash.Sum64(b) }

// HasSearchIndex reports whether the catalog's trigram index is built (by
// Prepare, a query's background build, or UnmarshalSearchIndex), which
// MarshalSearchIndex then encodes.
func (c *Catalog) HasSearchIndex() bool { return c.tri.Load() != nil }

// MarshalSearchIndex encodes the catalog's trigram index (the part of its
// search data that is slow to build: about 0.3-0.6 s at 100,000 sessions,
// against a few milliseconds to decode) so that a cache can persist it
// beside the sessions and titles the catalog was made from. It returns
// nil when the catalog has no index: fewer than 2,048 sessions, or not
// built yet (call Prepare first).
//
// The encoding, little-endian: the magic "DSHCATSI", the version, the
// lower-casing's Unicode versions, the session count, a checksum of every
// session's id, cwd and label and their lowered forms (what the postings
// index), the lowered ids and labels that differ from the originals (so a
// restart does not lower 100,000 strings), the trigram table, the
// postings, the sessions of a derived index that are checked on every
// query, and a checksum (xxHash-64) of all that precedes it.
func (c *Catalog) MarshalSearchIndex() []byte {
	x := c.tri.Load()
	if x == nil {
		return nil
	}
	b := make([]byte, 0, 64+8*len(x.ids.keys)+8*len(x.count)+len(x.post)+4*len(x.dirty))
	b = append(b, searchIndexMagic...)
	b = binary.LittleEndian.AppendUint32(b, SearchIndexVersion)
	b = appendString32(b, loweringVersion)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(c.Headers)))
	b = binary.LittleEndian.AppendUint64(b, c.searchFingerprint())
	b = appendLowered(b, len(c.Headers), c.lowID, func(i int) string { return c.Headers[i].ID })
	b = appendLowered(b, len(c.Headers), func(i int) string { return c.lowLabels[i] }, c.label)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(x.count)))
	b = binary.LittleEndian.AppendUint32(b, uint32(bits.TrailingZeros(uint(len(x.ids.keys)))))
	for k, key := range x.ids.keys {
		b = binary.LittleEndian.AppendUint32(b, key)
		b = binary.LittleEndian.AppendUint32(b, uint32(x.ids.vals[k]))
	}
	for t := range x.count {
		b = binary.LittleEndian.AppendUint32(b, uint32(x.count[t]))
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(x.post)))
	b = append(b, x.post...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(x.dirty)))
	for _, i := range x.dirty {
		b = binary.LittleEndian.AppendUint32(b, uint32(i))
	}
	return binary.LittleEndian.AppendUint64(b, checksum64(b))
}

// UnmarshalSearchIndex gives c the trigram index that MarshalSearchIndex
// encoded in data, instead of building it, when data was made from a
// catalog of the same sessions with the same lowered ids, cwds and labels
// in the same order. Otherwise (another version, other sessions or
// titles, damaged bytes) it returns an error saying why and c builds its
// index as usual. Like Follows it must be called before c is shared; it
// prepares c's lowered strings (a malformed catalog is reported).
func (c *Catalog) UnmarshalSearchIndex(data []byte) error {
	x, err := c.decodeSearchIndex(data)
	if err != nil {
		return err
	}
	if !c.triStarted.CompareAndSwap(false, true) {
		return errors.New("catalog search index: the catalog already has one or is building it")
	}
	c.tri.Store(x)
	return nil
}

// decodeSearchIndex decodes data as the trigram index of c, prepared.
func (c *Catalog) decodeSearchIndex(data []byte) (*trigramIndex, error) {
	if err := c.prepare(); err != nil {
		return nil, err
	}
	r, fp, err := searchIndexHeader(c, data)
	if err != nil {
		return nil, fmt.Errorf("catalog search index: %w", err)
	}
	readLowered(r, len(c.Headers), nil) // c lowered its own; the fingerprint covers both
	readLowered(r, len(c.Headers), nil)
	if r.Err() == nil && fp != c.searchFingerprint() {
		return nil, errors.New("catalog search index: made from other ids, cwds or titles than the catalog's")
	}
	return c.decodeTrigrams(r)
}

// decodeTrigrams decodes the trigram index of c from r, which is past the
// lowered strings.
func (c *Catalog) decodeTrigrams(r *binenc.Reader) (*trigramIndex, error) {
	x, err := decodeTrigrams(r, len(c.Headers))
	if err != nil {
		return nil, fmt.Errorf("catalog search index: %w", err)
	}
	x.byCWD, x.noCWD = cwdLists(c)
	x.sigs = byteSigs(c)
	return x, nil
}

// lowersFromSearchIndex sets c's lowered ids and labels from data when
// it was made from the same sessions and titles (its fingerprint then
// equals c's), and returns data after them.
func (c *Catalog) lowersFromSearchIndex(data []byte) (*binenc.Reader, error) {
	r, fp, err := searchIndexHeader(c, data)
	if err != nil {
		return nil, fmt.Errorf("catalog search index: %w", err)
	}
	n := len(c.Headers)
	readLowered(r, n, func(i int, s string) {
		if c.lowIDs == nil {
			c.lowIDs = make([]string, n)
			for j := range c.Headers {
				c.lowIDs[j] = c.Headers[j].ID
			}
		}
		c.lowIDs[i] = s
	})
	c.lowLabels = make([]string, n)
	for i := range c.Headers {
		c.lowLabels[i] = c.label(i)
	}
	readLowered(r, n, func(i int, s string) { c.lowLabels[i] = s })
	if r.Err() != nil {
		return nil, fmt.Errorf("catalog search index: lowered strings: %w", r.Err())
	}
	if fp != c.searchFingerprint() {
		return nil, errors.New("catalog search index: made from other ids, cwds or titles than the catalog's")
	}
	return r, nil
}

// loweringVersion names the lower-casing the persisted lowered strings
// were made with: an encoding made by another is not taken.
var loweringVersion = "unicode " + lowerDeltaVersion + " on x/text " + cases.UnicodeVersion

// appendString32 appends s with a uint32 length.
func appendString32(b []byte, s string) []byte {
	return append(binary.LittleEndian.AppendUint32(b, uint32(len(s))), s...)
}

// appendLowered appends, of n sessions, those whose lowered string low(i)
// differs from orig(i): the count, then each position and lowered string.
func appendLowered(b []byte, n int, low, orig func(int) string) []byte {
	at := len(b)
	b = binary.LittleEndian.AppendUint32(b, 0)
	count := 0
	for i := range n {
		if l := low(i); l != orig(i) {
			b = appendString32(binary.LittleEndian.AppendUint32(b, uint32(i)), l)
			count++
		}
	}
	binary.LittleEndian.PutUint32(b[at:], uint32(count))
	return b
}

// readLowered reads what appendLowered wrote for n sessions (positions
// ascending and below n) and, when set is not nil, gives it each session's
// string. The strings are copied once, into one allocation sized first:
// the search index's buffer is garbage once decoded, and at 100,000
// sessions growing the copy, then copying it again into a string, touched
// twice the memory a restart's first answer waits for.
func readLowered(r *binenc.Reader, n int, set func(i int, s string)) {
	count := int(r.Uint32LE())
	if r.Err() != nil || count > n || count > r.Len()/8 {
		r.Failf("%d lowered strings of %d sessions", count, n)
		return
	}
	size, sized := 0, *r
	for k, last := 0, -1; k < count; k++ {
		i := int(sized.Uint32LE())
		size += len(sized.Fixed(int(sized.Uint32LE())))
		if sized.Err() != nil {
			*r = sized
			return
		}
		if i >= n || i <= last {
			r.Failf("lowered string %d: session %d out of order or range", k, i)
			return
		}
		last = i
	}
	if set == nil {
		*r = sized
		return
	}
	buf, copied := make([]byte, 0, size), *r
	for range count {
		copied.Uint32LE()
		buf = append(buf, copied.Fixed(int(copied.Uint32LE()))...)
	}
	all, at := binenc.Alias(buf), 0
	for range count {
		i := int(r.Uint32LE())
		m := len(r.Fixed(int(r.Uint32LE())))
		set(i, all[at:at+m])
		at += m
	}
}

// searchFingerprint is a 64-bit fingerprint of every session's id, cwd
// (or its absence) and label, each with its lowered form when that
// differs: the strings the postings index, and what they were lowered
// from. Each string is hashed in place (xxHash-64) and the sessions'
// hashes are hashed in turn: at 100,000 sessions feeding the strings to
// one running hash took 40-70 ms, mostly copying them. The sessions'
// hashes are computed in parallel parts (a restart checks the persisted
// index with this before its first answer; most of it is waiting for
// the strings' memory), then hashed in order, as one running hash would.
func (c *Catalog) searchFingerprint() uint64 {
	cwdSums := make([]uint64, len(c.cwds))
	for k, w := range c.cwds {
		cwdSums[k] = loweredSum(w.cwd, w.low)
	}
	n := len(c.Headers)
	sums := make([]byte, 24*n)
	fill := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			var cwd uint64 // no cwd
			if k := c.cwdOf[i]; k >= 0 {
				cwd = cwdSums[k]
			}
			b := sums[24*i : 24*i+24]
			binary.LittleEndian.PutUint64(b, loweredSum(c.Headers[i].ID, c.lowID(i)))
			binary.LittleEndian.PutUint64(b[8:], cwd)
			binary.LittleEndian.PutUint64(b[16:], loweredSum(c.label(i), c.lowLabels[i]))
		}
	}
	parallel.Parts(n, parallelFingerprintSessions, fill)
	return xxhash.Sum64(sums)
}

// parallelFingerprintSessions is the fewest sessions searchFingerprint
// hashes in each of its parallel parts.
const parallelFingerprintSessions = 5000

// loweredSum hashes s and, when it differs, its lowered form low.
func loweredSum(s, low string) uint64 {
	sum := xxhash.Sum64String(s)
	if low != s {
		sum = bits.RotateLeft64(sum, 31) ^ xxhash.Sum64String(low) ^ 0x9e3779b97f4a7c15
	}
	return sum
}

// decodeTrigrams decodes the trigram index of n sessions from r (after
// the lowered strings), checking every structure a query relies on, so
// that damaged bytes give an error, never wrong answers or a panic.
func decodeTrigrams(r *binenc.Reader, n int) (*trigramIndex, error) {
	ntri := int(r.Uint32LE())
	tableBits := r.Uint32LE()
	if r.Err() == nil && (tableBits < 1 || tableBits > 30 || ntri > 1<<tableBits/2) {
		r.Failf("table of 2^%d slots for %d trigrams", tableBits, ntri)
	}
	if r.Err() != nil {
		return nil, r.Err()
	}
	ids, err := readTrigramTable(r, ntri, tableBits)
	if err != nil {
		return nil, err
	}
	counts := r.Fixed(4 * ntri)
	postLen := r.Uint32LE()
	post := r.Fixed(int(postLen))
	ndirty := int(r.Uint32LE())
	dirtyBytes := r.Fixed(4 * ndirty)
	if r.Err() == nil && r.Len() != 0 {
		r.Failf("%d bytes after the end", r.Len())
	}
	if r.Err() != nil {
		return nil, r.Err()
	}
	x := &trigramIndex{ids: ids, offs: make([]uint32, ntri+1), count: make([]int32, ntri), post: append([]byte(nil), post...)}
	if err := x.checkPostings(counts, n); err != nil {
		return nil, err
	}
	for k := range ndirty {
		i := int32(binary.LittleEndian.Uint32(dirtyBytes[4*k:]))
		if i < 0 || int(i) >= n || k > 0 && i <= x.dirty[k-1] {
			return nil, fmt.Errorf("dirty session %d (%d) out of order or range", k, i)
		}
		x.dirty = append(x.dirty, i)
	}
	return x, nil
}

// searchIndexHeader checks the magic, checksum, version, lower-casing
// and session count of an encoding for c, and returns it after them and
// the fingerprint it was made with.
func searchIndexHeader(c *Catalog, data []byte) (r *binenc.Reader, fingerprint uint64, err error) {
	if len(data) < len(searchIndexMagic)+8 || string(data[:len(searchIndexMagic)]) != searchIndexMagic {
		return nil, 0, errors.New("not an encoded search index")
	}
	body := data[:len(data)-8]
	if checksum64(body) != binary.LittleEndian.Uint64(data[len(body):]) {
		return nil, 0, errors.New("checksum mismatch (damaged)")
	}
	r = binenc.NewReader(body[len(searchIndexMagic):])
	if v := r.Uint32LE(); r.Err() == nil && v != SearchIndexVersion {
		return nil, 0, fmt.Errorf("version %d, want %d", v, SearchIndexVersion)
	}
	if l := r.Fixed(int(r.Uint32LE())); r.Err() == nil && string(l) != loweringVersion {
		return nil, 0, fmt.Errorf("lowered by %q, not %q", l, loweringVersion)
	}
	if n := r.Uint32LE(); r.Err() == nil && int(n) != len(c.Headers) {
		return nil, 0, fmt.Errorf("made for %d sessions, the catalog has %d", n, len(c.Headers))
	}
	fp := r.Fixed(8)
	if r.Err() != nil {
		return nil, 0, r.Err()
	}
	return r, binary.LittleEndian.Uint64(fp), nil
}

// readTrigramTable reads the open-addressing table of ntri trigram ids:
// each id once, each key where a lookup finds it.
func readTrigramTable(r *binenc.Reader, ntri int, tableBits uint32) (*trigramTable, error) {
	// The slots are read before the table is allocated: its size then
	// follows the bytes at hand, not a count a forged file claims.
	slots := r.Fixed(8 << tableBits)
	if r.Err() != nil {
		return nil, r.Err()
	}
	ids := &trigramTable{keys: make([]uint32, 1<<tableBits), vals: make([]int32, 1<<tableBits), shift: uint(32 - tableBits)}
	seen := make([]bool, ntri)
	for k := range ids.keys {
		if r.Err() != nil {
			return nil, r.Err()
		}
		key, val := binary.LittleEndian.Uint32(slots[8*k:]), int32(binary.LittleEndian.Uint32(slots[8*k+4:]))
		if key == 0 {
			continue
		}
		if val < 0 || int(val) >= ntri || seen[val] {
			r.Failf("trigram table slot %d: id %d out of range or repeated", k, val)
			continue
		}
		seen[val] = true
		ids.keys[k], ids.vals[k] = key, val
		ids.n++
	}
	if r.Err() == nil && ids.n != ntri {
		r.Failf("trigram table holds %d trigrams, want %d", ids.n, ntri)
	}
	for k, key := range ids.keys {
		if key != 0 && r.Err() == nil && ids.get(key-1) != ids.vals[k] {
			r.Failf("trigram table slot %d: key not where a lookup finds it", k)
		}
	}
	return ids, r.Err()
}

// checkPostings sets x's counts and offsets from counts (one uint32 per
// trigram) and checks that x.post holds exactly those postings, each an
// ascending gap list of sessions below n.
func (x *trigramIndex) checkPostings(counts []byte, n int) error {
	pos := 0
	for t := range len(x.count) {
		cnt := binary.LittleEndian.Uint32(counts[4*t:])
		if cnt > uint32(n) {
			return fmt.Errorf("trigram %d: %d sessions of %d", t, cnt, n)
		}
		x.count[t] = int32(cnt)
		prev := int64(-1)
		for range cnt {
			v, k := binary.Uvarint(x.post[pos:])
			if k <= 0 || v > math.MaxInt32 {
				return fmt.Errorf("trigram %d: postings malformed at byte %d", t, pos)
			}
			pos += k
			if prev += int64(v) + 1; prev >= int64(n) {
				return fmt.Errorf("trigram %d: session %d of %d", t, prev, n)
			}
		}
		x.offs[t+1] = uint32(pos)
	}
	if pos != len(x.post) {
		return fmt.Errorf("%d postings bytes after the last trigram's", len(x.post)-pos)
	}
	return nil
}
