package sessionstore

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestNewestHotKeepsTheMostPressing: past pollHotMax hot sessions, those
// with an unfinished header or read come first, then the most recently
// modified; within the bound every one is kept.
func TestNewestHotKeepsTheMostPressing(t *testing.T) {
	defer func(n int) { pollHotMax = n }(pollHotMax)
	pollHotMax = 4
	at := func(seg string, mtime int64) hotDir {
		return hotDir{proj: "p", seg: seg, rank: hotRank(&entry{Sig: fileSig{Size: 1, MtimeNs: mtime}})}
	}
	unread := hotDir{proj: "p", seg: "u", rank: hotRank(&entry{Sig: fileSig{Size: -1, MtimeNs: 1}})}
	noHeader := hotDir{proj: "p", seg: "h", rank: hotRank(&entry{Sig: fileSig{Size: 1, MtimeNs: 1}, NoHeaderYet: true})}
	if unread.rank != math.MaxInt64 || noHeader.rank != math.MaxInt64 {
		t.Fatalf("ranks of unfinished entries %d, %d, want the highest", unread.rank, noHeader.rank)
	}
	for _, tt := range []struct {
		in   []hotDir
		want string // the kept segs, sorted
	}{
		{[]hotDir{at("a", 5), at("b", 3)}, "a b"},
		{[]hotDir{at("a", 1), at("b", 9), at("c", 2), at("d", 8), at("e", 7), at("f", 6)}, "b d e f"},
		{[]hotDir{at("a", 9), unread, at("b", 8), noHeader, at("c", 7), at("d", 6)}, "a b h u"},
		{[]hotDir{at("a", 1), at("b", 5), at("c", 5), at("d", 9), at("e", 5), at("f", 5)}, ""}, // ties: d and three 5s
	} {
		var segs []string
		kept := newestHot(slices.Clone(tt.in))
		for _, h := range kept {
			segs = append(segs, h.seg)
		}
		slices.Sort(segs)
		switch got := strings.Join(segs, " "); {
		case tt.want != "" && got != tt.want:
			t.Errorf("newestHot of %d: %s, want %s", len(tt.in), got, tt.want)
		case tt.want == "" && (len(kept) != 4 || !slices.Contains(segs, "d") || slices.Contains(segs, "a")):
			t.Errorf("newestHot of %d with ties: %s, want d and three of the 5s", len(tt.in), got)
		}
	}
}
