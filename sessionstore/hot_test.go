package sessionstore

import (
	"fmt"
	"slices"
	"testing"
)

// TestNewestHotKeepsTheMostPressing: past pollHotMax hot sessions, those
// without an entry or a complete header come first, then the most
// recently modified, the first ones among equal mtimes; the order of the
// kept ones is theirs in the input. Within the bound every one is kept.
func TestNewestHotKeepsTheMostPressing(t *testing.T) {
	defer func(n int) { pollHotMax = n }(pollHotMax)
	pollHotMax = 4
	at := func(seg string, mtime int64) hotDir {
		return hotDir{proj: "p", seg: seg, e: &entry{Sig: fileSig{Size: 1, MtimeNs: mtime}}}
	}
	noHeader := at("h", 1)
	noHeader.e.NoHeaderYet = true
	for _, tt := range []struct {
		in   []hotDir
		want string
	}{
		{[]hotDir{at("a", 5), at("b", 3)}, "a b"},
		{[]hotDir{at("a", 1), at("b", 9), at("c", 2), at("d", 8), at("e", 7), at("f", 6)}, "b d e f"},
		{[]hotDir{at("a", 5), at("b", 5), at("c", 5), at("d", 5), at("e", 5), at("f", 5)}, "a b c d"},
		{[]hotDir{at("a", 1), at("b", 5), at("c", 5), at("d", 9), at("e", 5), at("f", 5)}, "b c d e"},
		{[]hotDir{at("a", 9), {proj: "p", seg: "n"}, at("b", 8), noHeader, at("c", 7), at("d", 6)}, "a n b h"},
	} {
		var got []string
		for _, h := range newestHot(slices.Clone(tt.in)) {
			got = append(got, h.seg)
		}
		if fmt.Sprint(got) != "["+tt.want+"]" {
			t.Errorf("newestHot of %d: %v, want [%s]", len(tt.in), got, tt.want)
		}
	}
}
