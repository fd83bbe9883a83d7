// Package bytesig is a filter for substring searches over many short
// strings: a Sig records which bytes and which (hashed) pairs of adjacent
// bytes a string holds, so a needle whose own Sig has a bit the string's
// lacks is not in the string, decided without reading it.
package bytesig

// Sig is a string's signature: a bit for each byte class (first word) and
// for each hashed pair of adjacent bytes (the other three). 32 bytes.
type Sig [4]uint64

// classes maps a byte to its bit in the first word: a-z and 0-9 have their
// own, other bytes share.
var classes = func() (t [256]uint8) {
	for b := range t {
		switch {
		case b >= 'a' && b <= 'z':
			t[b] = uint8(b - 'a')
		case b >= '0' && b <= '9':
			t[b] = uint8(26 + b - '0')
		case b < 0x80:
			t[b] = uint8(36 + b%20)
		default:
			t[b] = uint8(56 + b%8)
		}
	}
	return t
}()

// Add adds the bytes and byte pairs of s (the signature of several
// strings is the union of theirs: a needle in any of them passes).
func (g *Sig) Add(s string) {
	for j := 0; j < len(s); j++ {
		g[0] |= 1 << classes[s[j]]
		if j+1 < len(s) {
			h := (uint32(s[j])<<8 | uint32(s[j+1])) * 2654435761 >> 24 % 192
			g[1+h/64] |= 1 << (h % 64)
		}
	}
}

// Of returns the signature of s.
func Of(s string) Sig {
	var g Sig
	g.Add(s)
	return g
}

// Holds reports whether every bit of want is in g: false means no string
// with signature want is in a string with signature g.
func (g *Sig) Holds(want *Sig) bool {
	return g[0]&want[0] == want[0] && g[1]&want[1] == want[1] && g[2]&want[2] == want[2] && g[3]&want[3] == want[3]
}
