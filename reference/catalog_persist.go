package reference

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc64"
	"math"
	"math/bits"

	"github.com/dsh-lsp/dsh-lsp/internal/binenc"
)

// SearchIndexVersion is the version of the encoding MarshalSearchIndex
// writes; UnmarshalSearchIndex accepts only this one. A cache that
// persists the encoding can key its own format on it.
const SearchIndexVersion = 1

// searchIndexMagic starts every encoded search index.
const searchIndexMagic = "DSHCATSI"

var crcTable = crc64.MakeTable(crc64.ECMA)

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
// session count, a CRC-64 of every session's lowered id, cwd and label
// (what the postings index), the trigram table, the postings, the
// sessions of a derived index that are checked on every query, and a
// CRC-64 of all that precedes it.
func (c *Catalog) MarshalSearchIndex() []byte {
	x := c.tri.Load()
	if x == nil {
		return nil
	}
	b := make([]byte, 0, 64+8*len(x.ids.keys)+8*len(x.count)+len(x.post)+4*len(x.dirty))
	b = append(b, searchIndexMagic...)
	b = binary.LittleEndian.AppendUint32(b, SearchIndexVersion)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(c.Headers)))
	b = binary.LittleEndian.AppendUint64(b, c.searchFingerprint())
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
	return binary.LittleEndian.AppendUint64(b, crc64.Checksum(b, crcTable))
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
	x, err := decodeSearchIndex(c, data)
	if err != nil {
		return nil, fmt.Errorf("catalog search index: %w", err)
	}
	x.byCWD, x.noCWD = cwdLists(c)
	return x, nil
}

// searchFingerprint is a CRC-64 of every session's lowered id, cwd (or
// its absence) and label, each length-prefixed: what the postings index.
func (c *Catalog) searchFingerprint() uint64 {
	var crc uint64
	var buf []byte
	field := func(s string) {
		buf = binary.AppendUvarint(buf, uint64(len(s)))
		buf = append(buf, s...)
		if len(buf) >= 1<<16 {
			crc = crc64.Update(crc, crcTable, buf)
			buf = buf[:0]
		}
	}
	for i := range c.Headers {
		field(c.lowID(i))
		if k := c.cwdOf[i]; k >= 0 {
			buf = append(buf, 1)
			field(c.cwds[k].low)
		} else {
			buf = append(buf, 0)
		}
		field(c.lowLabels[i])
	}
	return crc64.Update(crc, crcTable, buf)
}

// decodeSearchIndex checks data against c (prepared) and decodes it,
// checking every structure a query relies on, so that damaged bytes give
// an error, never wrong answers or a panic.
func decodeSearchIndex(c *Catalog, data []byte) (*trigramIndex, error) {
	r, ntri, tableBits, err := searchIndexHeader(c, data)
	if err != nil {
		return nil, err
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
	if err := x.checkPostings(counts, len(c.Headers)); err != nil {
		return nil, err
	}
	for k := range ndirty {
		i := int32(binary.LittleEndian.Uint32(dirtyBytes[4*k:]))
		if i < 0 || int(i) >= len(c.Headers) || k > 0 && i <= x.dirty[k-1] {
			return nil, fmt.Errorf("dirty session %d (%d) out of order or range", k, i)
		}
		x.dirty = append(x.dirty, i)
	}
	return x, nil
}

// searchIndexHeader checks the magic, checksum, version and the catalog
// the encoding was made from, and reads the trigram table's dimensions.
func searchIndexHeader(c *Catalog, data []byte) (r *binenc.Reader, ntri int, tableBits uint32, err error) {
	if len(data) < len(searchIndexMagic)+8 || string(data[:len(searchIndexMagic)]) != searchIndexMagic {
		return nil, 0, 0, errors.New("not an encoded search index")
	}
	body := data[:len(data)-8]
	if crc64.Checksum(body, crcTable) != binary.LittleEndian.Uint64(data[len(body):]) {
		return nil, 0, 0, errors.New("checksum mismatch (damaged)")
	}
	r = binenc.NewReader(body[len(searchIndexMagic):])
	if v := r.Uint32LE(); r.Err() == nil && v != SearchIndexVersion {
		return nil, 0, 0, fmt.Errorf("version %d, want %d", v, SearchIndexVersion)
	}
	if n := r.Uint32LE(); r.Err() == nil && int(n) != len(c.Headers) {
		return nil, 0, 0, fmt.Errorf("made for %d sessions, the catalog has %d", n, len(c.Headers))
	}
	if fp := r.Fixed(8); r.Err() == nil && binary.LittleEndian.Uint64(fp) != c.searchFingerprint() {
		return nil, 0, 0, errors.New("made from other ids, cwds or titles than the catalog's")
	}
	ntri = int(r.Uint32LE())
	tableBits = r.Uint32LE()
	if r.Err() == nil && (tableBits < 1 || tableBits > 30 || ntri > 1<<tableBits/2) {
		r.Failf("table of 2^%d slots for %d trigrams", tableBits, ntri)
	}
	return r, ntri, tableBits, r.Err()
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
