package sessionstore

import (
	"bytes"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/storepath"
)

// LongTests reports whether DSH_LONG_TESTS is set, as run-tests.sh (CI)
// does: the randomised and race tests then run their full number of
// rounds, which only raises the odds of meeting a rare case; without it
// they run fewer, still covering every kind of change, so that a
// developer's `go test ./...` stays quick.
func LongTests() bool { return os.Getenv("DSH_LONG_TESTS") != "" }

// hashTree is treeHash for the external test package.
func HashTreeForTest(t testing.TB, root string) string { return treeHash(t, root) }

// testExits run after all tests, in TestMain.
var testExits []func()

// AtTestExit runs f when the test binary's tests have all finished (for
// what outlives one test, such as a binary built once for several).
func AtTestExit(f func()) { testExits = append(testExits, f) }

// OpenWaited opens an index over root with opts, closed when the test
// ends, and waits for its first pass.
func OpenWaited(t testing.TB, root string, opts IndexOptions) *Indexed {
	t.Helper()
	x, err := OpenIndexed(root, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	if err := x.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	return x
}

// KindOf returns the class of err, or 0 when err is not a store *Error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

// Open returns a Store over root that detects the encoding from the files
// present (zstd when any session.jsonl.zstd exists, else raw). The root
// need not exist yet (a missing root lists no sessions).
func Open(root string) (*Store, error) { return OpenWith(root, Options{}) }

// OpenEncoding returns a Store that reads only enc's transcripts (dsh's
// compression setting); sessions in the other encoding are reported as
// problems.
func OpenEncoding(root string, enc Encoding) (*Store, error) {
	if enc != Raw && enc != Zstd {
		return nil, fmt.Errorf("sessionstore: unknown encoding %d", enc)
	}
	return OpenWith(root, Options{Encoding: enc})
}

// DecodeSegment inverts EncodeSegment; ok is false when seg is not a
// canonical encoding.
func DecodeSegment(seg string) (string, bool) {
	var units []uint16
	for i := 0; i < len(seg); {
		c := seg[i]
		if c != '~' {
			// Any other byte is kept as a unit: the re-encoding below
			// rejects what dsh would have escaped.
			units = append(units, uint16(c))
			i++
			continue
		}
		if i+5 > len(seg) {
			return "", false
		}
		var u uint16
		for _, h := range []byte(seg[i+1 : i+5]) {
			d := strings.IndexByte("0123456789ABCDEF", h)
			if d < 0 {
				return "", false
			}
			u = u<<4 | uint16(d)
		}
		units = append(units, u)
		i += 5
	}
	// Surrogate pairs decode to runes; lone surrogates become WTF-8.
	var b []byte
	for i := 0; i < len(units); i++ {
		u := units[i]
		if utf16.IsSurrogate(rune(u)) {
			if u < 0xDC00 && i+1 < len(units) && units[i+1] >= 0xDC00 && units[i+1] <= 0xDFFF {
				b = utf8.AppendRune(b, utf16.DecodeRune(rune(u), rune(units[i+1])))
				i++
				continue
			}
		}
		b = jsjson.AppendWTF8(b, rune(u))
	}
	id := string(b)
	if enc, err := storepath.EncodeSegment(id); err != nil || enc != seg {
		return "", false
	}
	return id, true
}

// MarshalSurface writes s exactly as dsh's readSurface object:
// {"session":…,"capturedThroughSeq":N|null,"events":[…]}.
func MarshalSurface(s *reference.Surface) []byte {
	w := jsjson.NewObject(nil).Raw("session", s.Session)
	if s.CapturedThroughSeq != nil {
		w.Int("capturedThroughSeq", *s.CapturedThroughSeq)
	} else {
		w.Raw("capturedThroughSeq", []byte("null"))
	}
	ev := []byte{'['}
	for i, e := range s.Events {
		if i > 0 {
			ev = append(ev, ',')
		}
		ev = append(ev, e.Raw...)
	}
	return w.Raw("events", append(ev, ']')).Bytes()
}

// CachePath returns the index cache file, "" when the index is memory
// only.
func (ix *Indexed) CachePath() string { return ix.cachePath }

// SortHeaders sorts headers in listSessions order, as the index lists.
func SortHeaders(hs []reference.SessionHeader) {
	sortListing(hs, func(h reference.SessionHeader) (int64, string) { return h.CreatedAt, h.ID })
}

// encodeCache is the cache file writeCacheTo writes, in memory.
func encodeCache(root string, pinned Encoding, all, listed []*entry, shape storeShape, searchIndex []byte) []byte {
	var buf bytes.Buffer
	noLookup := func(string) *entry { return nil }
	writeCacheTo(&buf, root, pinned, all, listed, noLookup, shape, searchIndex) // a bytes.Buffer does not fail
	return buf.Bytes()
}
