package bytesig

import (
	"cmp"
	"math/bits"
	"slices"
)

// Sliced holds the signatures of n strings bit-sliced: for each of a
// Sig's 256 bits, a bitmap over the strings. A search reads only the
// bitmaps of the bits its needle sets (a 3-byte needle: about five of
// 12.5 KB each at 100,000 strings) rather than every string's 32 bytes,
// and takes the same strings as Holds would, in the same order.
type Sliced struct {
	n int
	// maps[b] has bit i set when string i's Sig has bit b; nil when no
	// string has it. counts[b] is the number of bits set in maps[b].
	maps   [256][]uint64
	counts [256]int
}

// SliceOf returns the signatures sig(0) … sig(n-1) bit-sliced.
func SliceOf(n int, sig func(i int) Sig) *Sliced {
	s := &Sliced{n: n}
	words := (n + 63) / 64
	// A word of every bitmap at a time, gathered in acc (2 KB, in
	// cache), rather than a bit at a time into 256 far-apart bitmaps.
	var acc [256]uint64
	for w := range words {
		for i := w * 64; i < min(n, w*64+64); i++ {
			g := sig(i)
			for k, v := range g {
				for v != 0 {
					acc[k*64+bits.TrailingZeros64(v)] |= 1 << (i % 64)
					v &= v - 1
				}
			}
		}
		for b, v := range acc {
			if v == 0 {
				continue
			}
			if s.maps[b] == nil {
				s.maps[b] = make([]uint64, words)
			}
			s.maps[b][w] = v
			s.counts[b] += bits.OnesCount64(v)
			acc[b] = 0
		}
	}
	return s
}

// Each calls fn, in ascending order, with the index of every string whose
// Sig holds want (Holds), until fn returns false.
func (s *Sliced) Each(want *Sig, fn func(i int) bool) {
	var set []int
	for w, v := range want {
		for v != 0 {
			b := w*64 + bits.TrailingZeros64(v)
			v &= v - 1
			if s.maps[b] == nil {
				return // no string has the bit
			}
			set = append(set, b)
		}
	}
	// The sparsest bitmap first: most words are then zero after one.
	slices.SortFunc(set, func(a, b int) int { return cmp.Compare(s.counts[a], s.counts[b]) })
	maps := make([][]uint64, len(set))
	for i, b := range set {
		maps[i] = s.maps[b]
	}
	for w := range (s.n + 63) / 64 {
		v := ^uint64(0)
		if rest := s.n - w*64; rest < 64 {
			v = 1<<rest - 1
		}
		for _, m := range maps {
			if v &= m[w]; v == 0 {
				break
			}
		}
		for v != 0 {
			if !fn(w*64 + bits.TrailingZeros64(v)) {
				return
			}
			v &= v - 1
		}
	}
}
