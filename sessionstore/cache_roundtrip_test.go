package sessionstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand"
	randv2 "math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
	"github.com/dsh-lsp/dsh-lsp/internal/binenc"
	"github.com/dsh-lsp/dsh-lsp/internal/binenc/binenctest"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// TestCacheEntryEncodingRoundTrips fills every persisted (exported) field
// of random entries, nil and empty values among them, and checks that the
// cache file gives them back equal, with the listing order: a field the
// encoding forgets fails here.
func TestCacheEntryEncodingRoundTrips(t *testing.T) {
	rng := randv2.New(randv2.NewPCG(7, 8))
	for round := range 200 {
		n := rng.IntN(6)
		if round%40 == 0 {
			// Enough entries for several runs of marks (decodeHead).
			n = 2*entriesPerMark + rng.IntN(entriesPerMark+1)
		}
		all := make([]*entry, n)
		for i := range all {
			all[i] = new(entry)
			binenctest.Fill(rng, all[i])
			if rng.IntN(3) == 0 {
				all[i].ReadID = all[i].ListedID
			}
			// A real header holds its id, and a session directory is
			// named after it: the encoding then writes neither again.
			switch rng.IntN(4) {
			case 0:
				all[i].ListedRaw = fmt.Appendf(nil, `{"id":%q}`, all[i].ListedID)
			case 1:
				all[i].ListedRaw = append(all[i].ListedRaw, all[i].ListedID...)
				all[i].Seg = all[i].ListedID
			}
			if !all[i].Whole {
				all[i].Sum = 0 // a sum is kept only with the whole file's parse
			}
			var state []byte
			binenctest.Fill(rng, &state)
			all[i].State = savedState{held: state}
			if rng.IntN(5) == 0 {
				all[i].State = savedState{} // a read error's entry has none
			}
		}
		var listed []*entry
		for _, e := range all {
			if rng.IntN(2) == 0 {
				listed = append(listed, e)
			}
		}
		shape := storeShape{root: rng.Int64(), projects: map[string]int64{}}
		for range rng.IntN(3) {
			shape.projects[fmt.Sprint(rng.IntN(100))] = rng.Int64() - rng.Int64()
		}
		var searchIndex []byte
		binenctest.Fill(rng, &searchIndex)
		cf, err := decodeCache(encodeCache("/root", Zstd, all, listed, shape, searchIndex))
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if cf.Root != "/root" || cf.Pinned != Zstd || len(cf.Entries) != len(all) || len(cf.Listed) != len(listed) {
			t.Fatalf("round %d: decoded %q %v, %d entries, %d listed", round, cf.Root, cf.Pinned, len(cf.Entries), len(cf.Listed))
		}
		for i, e := range all {
			if diff := persistedDiff(reflect.ValueOf(*e), reflect.ValueOf(*cf.Entries[i]), ""); diff != "" {
				t.Fatalf("round %d: entry %d does not round-trip: %s", round, i, diff)
			}
		}
		if !reflect.DeepEqual(cf.SearchIndex, searchIndex) {
			t.Fatalf("round %d: search index %v, want %v", round, cf.SearchIndex, searchIndex)
		}
		if !reflect.DeepEqual(cf.Shape, shape) {
			t.Fatalf("round %d: shape %v, want %v", round, cf.Shape, shape)
		}
		for i, e := range listed {
			if cf.Entries[cf.Listed[i]] != cf.Entries[slices.Index(all, e)] {
				t.Fatalf("round %d: listing position %d does not round-trip", round, i)
			}
		}
	}
}

// roundTripTitles are the title texts the random stores use: absent,
// empty and blank titles are the ones a lossy cache confuses.
var roundTripTitles = []string{"", " ", "\t\n", "Named", "ünïcödé 标题", "\u2028"}

// writeRoundTripStore writes n random sessions under root in comp: random
// cwds (none, empty, blank, absolute), creation times including 0, and a
// random series of user messages and title events, the last title often
// empty or blank.
func writeRoundTripStore(t *testing.T, root string, comp workload.Compression, n int, r *rand.Rand) {
	t.Helper()
	cwds := []*string{nil, ptr("/w"), ptr("/w/with space"), ptr("/ü")}
	for i := range n {
		id := fmt.Sprintf("s%d-%d", i, r.Intn(1000))
		cwd := cwds[r.Intn(len(cwds))]
		created := []int64{0, 1, 1699999999000}[r.Intn(3)]
		header := fmt.Sprintf(`{"type":"session","version":0,"id":%q,"createdAt":%d,"delegationDepth":0`, id, created)
		if cwd != nil {
			header += fmt.Sprintf(`,"cwd":%q`, *cwd)
		}
		header += "}\n"
		var body strings.Builder
		seq := 0
		for range r.Intn(6) {
			if r.Intn(2) == 0 {
				title := roundTripTitles[r.Intn(len(roundTripTitles))]
				kind := []string{"user", "fallback"}[r.Intn(2)]
				fmt.Fprintf(&body, `{"type":"session/title","seq":%d,"time":%d,"data":{"title":%q,"messageSeqs":[],"source":{"kind":%q}}}`+"\n", seq, seq+1, title, kind)
			} else {
				fmt.Fprintf(&body, `{"type":"user/message","seq":%d,"time":%d,"data":{"content":[{"type":"text","text":"m%d"}],"source":{"kind":"user"},"role":"user","id":"00000000-0000-4000-8000-%012d"},"surfaceOp":"append"}`+"\n", seq, seq+1, seq, seq)
			}
			seq++
		}
		path, err := SessionPath(root, cwd, id, encodingOf(comp))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		data := workload.EncodeBatch(comp, []byte(header))
		if body.Len() > 0 {
			data = append(data, workload.EncodeBatch(comp, []byte(body.String()))...)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func encodingOf(comp workload.Compression) Encoding {
	if comp == workload.Zstd {
		return Zstd
	}
	return Raw
}

// TestCacheRoundTripsEveryField folds random stores, persists the index,
// decodes the cache file and compares every persisted field of every entry
// with a fresh fold's; then a restart on the cache answers exactly as a
// cold index does.
func TestCacheRoundTripsEveryField(t *testing.T) {
	rounds := 8
	if LongTests() {
		rounds = 24
	}
	for round := range rounds {
		comp := []workload.Compression{workload.None, workload.Zstd}[round%2]
		t.Run(fmt.Sprintf("round %d %s", round, comp), func(t *testing.T) {
			r := rand.New(rand.NewSource(int64(round)))
			root := t.TempDir()
			writeRoundTripStore(t, root, comp, 1+r.Intn(12), r)
			cacheDir := t.TempDir()

			cold := openIndexed(t, root, cacheDir)
			want := map[dirKey]*entry{}
			cold.mu.Lock()
			for k, e := range cold.entryMap() {
				c := *e
				want[k] = &c
			}
			cold.mu.Unlock()
			if err := cold.Close(); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(cold.CachePath())
			if err != nil {
				t.Fatal(err)
			}
			cf, err := decodeCache(data)
			if err != nil {
				t.Fatal(err)
			}
			if len(cf.Entries) != len(want) {
				t.Fatalf("cache holds %d entries, the fold %d", len(cf.Entries), len(want))
			}
			for _, got := range cf.Entries {
				w := want[got.dirKey()]
				if w == nil {
					t.Fatalf("cache holds %s/%s, which the fold does not", got.Proj, got.Seg)
				}
				if diff := persistedDiff(reflect.ValueOf(*w), reflect.ValueOf(*got), ""); diff != "" {
					t.Errorf("entry %s/%s does not round-trip: %s", got.Proj, got.Seg, diff)
				}
			}

			warm := openIndexed(t, root, cacheDir)
			defer warm.Close()
			fresh := openIndexed(t, root, NoCache)
			defer fresh.Close()
			if a, b := listingAnswer(t, fresh), listingAnswer(t, warm); a != b {
				t.Errorf("restarted on the cache:\n%s\nfresh fold:\n%s", b, a)
			}
		})
	}
}

// listingAnswer renders the candidates and titles src gives for an empty
// query: what completion, dsh/candidates and MCP search show.
func listingAnswer(t *testing.T, src *Indexed) string {
	t.Helper()
	hs, err := src.ListSessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 0, len(hs))
	for _, h := range hs {
		ids = append(ids, h.ID)
	}
	sort.Strings(ids)
	var b strings.Builder
	for _, v := range titlesOf(t, src, ids) {
		b.WriteString(fmtTitle(v) + "\n")
	}
	svc, err := reference.NewService(src, reference.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	cs, err := svc.ListCandidates(context.Background(), reference.Target{}, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		fmt.Fprintf(&b, "%s %q\n", c.SessionID, c.Label)
	}
	return b.String()
}

// persistedDiff compares the exported fields of a and b as the cache must
// keep them: a nil and a set pointer differ even when it points to a zero
// value; nil and empty slices or maps hold the same (nothing) and are equal.
func persistedDiff(a, b reflect.Value, path string) string {
	if sa, ok := a.Interface().(savedState); ok {
		sb := b.Interface().(savedState)
		ba, erra := sa.bytes()
		bb, errb := sb.bytes()
		if sa.present() != sb.present() || !bytes.Equal(ba, bb) || (erra == nil) != (errb == nil) {
			return fmt.Sprintf("%s: state %v %q, restored %v %q", path, sa.present(), ba, sb.present(), bb)
		}
		return ""
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() != b.IsNil() {
			return fmt.Sprintf("%s: set %v, restored %v", path, !a.IsNil(), !b.IsNil())
		}
		if a.IsNil() {
			return ""
		}
		return persistedDiff(a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			if !a.Type().Field(i).IsExported() {
				continue
			}
			if d := persistedDiff(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); d != "" {
				return d
			}
		}
		return ""
	case reflect.Slice:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: length %d, restored %d", path, a.Len(), b.Len())
		}
		for i := 0; i < a.Len(); i++ {
			if d := persistedDiff(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Map:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: %d keys, restored %d", path, a.Len(), b.Len())
		}
		for _, k := range a.MapKeys() {
			bv := b.MapIndex(k)
			if !bv.IsValid() {
				return fmt.Sprintf("%s: key %v lost", path, k)
			}
			if d := persistedDiff(a.MapIndex(k), bv, fmt.Sprintf("%s[%v]", path, k)); d != "" {
				return d
			}
		}
		return ""
	default:
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			return fmt.Sprintf("%s: %#v, restored %#v", path, a.Interface(), b.Interface())
		}
		return ""
	}
}

// TestSmallestCacheEntryIsMinEntryBytes: decodeCache bounds the entry
// count by minEntryBytes, so the smallest entry must encode to exactly
// that many bytes (fewer would refuse valid caches; more would let a
// forged count allocate more than it should), and caches of only such
// entries must decode.
func TestSmallestCacheEntryIsMinEntryBytes(t *testing.T) {
	if n := len(appendEntry(nil, &entry{}, func(string) uint64 { return 0 }, false, writtenState{})); n != minEntryBytes {
		t.Fatalf("the smallest entry encodes to %d bytes, minEntryBytes is %d", n, minEntryBytes)
	}
	all := make([]*entry, 1000)
	for i := range all {
		all[i] = &entry{}
	}
	cf, err := decodeCache(encodeCache("", Raw, all, nil, storeShape{}, nil))
	if err != nil || len(cf.Entries) != len(all) {
		t.Fatalf("a cache of %d smallest entries: %v", len(all), err)
	}
}

// TestCacheStateReadBackOrLost: a state that lies in a loaded cache is
// written to the next cache as it was read back; one that no longer reads
// back as written (its bytes changed in the file) is left out, and its
// entry is marked for a parse after the restart, not taken as unreadable.
func TestCacheStateReadBackOrLost(t *testing.T) {
	section := bytesSection([]byte("good-statebad-state"))
	good := savedState{in: section, off: 0, n: 10, sum: crc32.Checksum([]byte("good-state"), castagnoli)}
	bad := savedState{in: section, off: 10, n: 9, sum: crc32.Checksum([]byte("bad-statE"), castagnoli)}
	all := []*entry{
		{Seg: "a", Sig: fileSig{Size: 100}, State: good},
		{Seg: "b", Sig: fileSig{Size: 200}, State: bad},
	}
	cf, err := decodeCache(encodeCache("/root", Raw, all, nil, storeShape{}, nil))
	if err != nil {
		t.Fatal(err)
	}
	a, b := cf.Entries[0], cf.Entries[1]
	if got, err := a.State.bytes(); err != nil || string(got) != "good-state" || a.Sig.Size != 100 {
		t.Errorf("a state read back: %q, %v, size %d; want it kept as it was", got, err, a.Sig.Size)
	}
	if b.State.present() || b.Sig.Size != -1 {
		t.Errorf("a state that does not read back: present %v, size %d; want it left out and the entry parsed again", b.State.present(), b.Sig.Size)
	}
}

// TestStateTailReadAlone: the tail of a state that lies in a loaded cache
// (in memory, or in the file kept open) is its first bytes, read without
// the rest; a state too short to hold one has none.
func TestStateTailReadAlone(t *testing.T) {
	state := []byte("\x07\x00\x00\x00\x00\x00\x00\x00\x2a\x00\x00\x00\x05\x00\x00\x00rest of the state")
	all := []*entry{
		{Seg: "a", State: savedState{held: state}},
		{Seg: "b", State: savedState{held: []byte("short")}},
	}
	data := encodeCache("/root", Raw, all, nil, storeShape{}, nil)
	path := filepath.Join(t.TempDir(), "index.bin")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	fromFile, err := readCacheFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fromFile.states.close()
	inMemory, err := decodeCache(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, cf := range []*cacheFile{fromFile, inMemory} {
		if got := cf.Entries[0].tail(); got != (stateTail{Offset: 7, TailCRC: 42, Sum: 5}) {
			t.Errorf("tail %+v, want offset 7, CRC 42, sum 5", got)
		}
		if got := cf.Entries[1].tail(); got.Offset != -1 {
			t.Errorf("tail of a short state %+v, want none", got)
		}
	}
}

// TestSearchIndexReadApart: the search index, the end of the head, is
// read as a buffer of its own (garbage once decoded, while the entries'
// strings keep the rest of the head), and the head's checksum covers it.
func TestSearchIndexReadApart(t *testing.T) {
	e := &entry{Proj: "p", Seg: "s", ListedID: "s", State: savedState{held: []byte("state")}}
	searchIndex := []byte("the catalog's search index")
	data := encodeCache("/root", Zstd, []*entry{e}, []*entry{e}, storeShape{projects: map[string]int64{}}, searchIndex)
	var mu sync.Mutex
	var reads [][2]int64
	read := func(from, to int64, _ bool) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		reads = append(reads, [2]int64{from, to})
		return slices.Clone(data[from:to]), nil
	}
	states := func(base, size int64) *stateSection { return bytesSection(data[base : base+size]) }
	cf, err := decodeCacheParts(int64(len(data)), read, states)
	if err != nil {
		t.Fatal(err)
	}
	if string(cf.SearchIndex) != string(searchIndex) {
		t.Fatalf("search index %q, want %q", cf.SearchIndex, searchIndex)
	}
	end := int64(len(data) - cacheTrailerBytes)
	if !slices.Contains(reads, [2]int64{end - int64(len(searchIndex)), end}) {
		t.Fatalf("reads %v: none is the search index alone, %d-%d", reads, end-int64(len(searchIndex)), end)
	}
	data[end-3] ^= 0xff
	if _, err := decodeCache(data); err == nil {
		t.Fatal("a flipped byte in the search index decoded")
	}
}

// TestDamagedMarksDoNotDecode: marks that do not locate the entries (a
// run that starts mid-entry, one that skips a state, a count that does
// not fit) give an error, never a panic or a wrong entry.
func TestDamagedMarksDoNotDecode(t *testing.T) {
	all := make([]*entry, entriesPerMark+7)
	for i := range all {
		all[i] = &entry{Proj: "p", Seg: fmt.Sprint(i), ListedID: fmt.Sprint(i), State: savedState{held: []byte("state")}}
	}
	data := encodeCache("/root", Raw, all, nil, storeShape{projects: map[string]int64{}}, nil)
	if _, err := decodeCache(data); err != nil {
		t.Fatal(err)
	}
	end := len(data) - cacheTrailerBytes
	headAt := int(binary.LittleEndian.Uint64(data[end+4:]))
	marksAt := headAt + int(binary.LittleEndian.Uint64(data[end+24:]))
	for _, c := range []struct {
		name    string
		marks   []entryMark
		decodes bool
	}{
		{"as written (the control)", []entryMark{{0, 0}, {0, 0}, {0, 0}}, true},
		{"second run starts one byte late", []entryMark{{0, 0}, {1, 0}, {0, 0}}, false},
		{"second run skips a state", []entryMark{{0, 0}, {0, 5}, {0, 0}}, false},
		{"one mark too few", []entryMark{{0, 0}, {0, 0}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := binenc.NewReader(data[marksAt:end])
			orig := make([]entryMark, r.Count(2))
			for i := range orig {
				orig[i] = entryMark{at: int64(r.Uint()), stateAt: int64(r.Uint())}
			}
			var b []byte
			b = binenc.AppendUint(b, uint64(len(c.marks)))
			for i, d := range c.marks {
				m := orig[min(i, len(orig)-1)]
				b = binenc.AppendUint(binenc.AppendUint(b, uint64(m.at+d.at)), uint64(m.stateAt+d.stateAt))
			}
			marksLen := len(data[marksAt:end]) - r.Len()
			damaged := slices.Concat(data[:marksAt], b, data[marksAt+marksLen:])
			// Well formed but for the marks: the head's checksum (the
			// head ends the file here: no search index) is made again.
			dEnd := len(damaged) - cacheTrailerBytes
			binary.LittleEndian.PutUint32(damaged[dEnd:], crc32.Checksum(damaged[headAt:dEnd], crc32.MakeTable(crc32.Castagnoli)))
			if _, err := decodeCache(damaged); (err == nil) != c.decodes {
				t.Fatalf("decoded: %v, want %v (%v)", err == nil, c.decodes, err)
			}
		})
	}
}

// FuzzDecodeCache: whatever a cache file holds, decoding it gives entries
// or an error, never a panic, and never allocates past the bound the
// counts have (binenc.Reader.Count).
func FuzzDecodeCache(f *testing.F) {
	e := &entry{Proj: "p", Seg: "s", ListedID: "s", ListedRaw: []byte(`{"id":"s"}`), State: savedState{held: []byte("state")}}
	f.Add(encodeCache("/root", Zstd, []*entry{e}, []*entry{e}, storeShape{projects: map[string]int64{"p": 1}}, []byte("search")))
	f.Add(encodeCache("/root", Raw, nil, nil, storeShape{}, nil))
	whole := *e
	whole.Whole, whole.Sum = true, 0xC0FFEE // the whole file's sum follows the signature
	f.Add(encodeCache("/root", Zstd, []*entry{&whole}, []*entry{&whole}, storeShape{}, nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		if cf, err := decodeCache(data); err == nil && len(cf.Entries) > len(data) {
			t.Fatalf("%d entries from %d bytes", len(cf.Entries), len(data))
		}
	})
}
