// Writes reference/testdata/collation/icu78.json: orders and pairwise
// results of JS localeCompare (ICU root) for LocaleCompare's tests.
// Run from reference/: node internal/collategen/vectors.mjs
import fs from 'node:fs';

const cmp = (a, b) => Math.sign(a.localeCompare(b));
// Curated ids: the conformance tie-break list, the characters and
// one or more characters of many blocks added since Unicode 6.2.
const curated = [
  '_x', '-x', '~', '10', '9', 'a', 'A', 'ä', 'a10', 'a9', 'b', 'B', 'e', 'é', 'f', 'z', 'Z', 'あ', '中',
  '🙂', 'a🙂', '🙂a', '😀', '🛻', '🫠', '🪿', '🥲', '🤌', '₺', '₿', '⃀',
  '\u1C89EMA', '\u1C8Aema', '\u1C80', 'ꟊ', '\uA7CB', '\uA7DC', '\u0264', '\u019B',
  '\u{10D50}', '\u{10D70}', '\u{10D4A}', '\u{16EA0}', '\u{16EBB}',
  'Ϳ', 'ϳ', 'ԯ', 'ᲀ', 'ꭰ', 'Ꭰ', 'ꞔ', 'Ꞻ', 'ꞻ', '\u{1E900}', '\u{1E922}',
  '\u{11700}', '\u{11D00}', '\u{16FE0}', '\u{17000}', '\u{18B00}', '\u{1B170}',
  '\u{2B820}', '\u{30000}', '\u{31350}', '\u9FCD', '\u4E00', '\u3400', '\u{20000}',
  '\u0870', '\u08A0', '\u0860', 'x\u1AB0', 'x\u0301', '\u{1F900}', '\u{1FA70}',
  'session-🙂', 'session-a', 'Session-A', 'session-\u1C89', 'ids-\u{10D50}x',
];
const sorted = [...curated].sort((a, b) => a.localeCompare(b));

// Random short strings mixing old and new characters, compared pairwise.
// xorshift32: deterministic, and its low bits are usable (unlike a
// power-of-two LCG's).
let seed = 14;
const rnd = (n) => { seed ^= seed << 13; seed >>>= 0; seed ^= seed >>> 17; seed ^= seed << 5; seed >>>= 0; return seed % n; };
const pools = [
  [...'abcxyzABCXYZ0189-_~.'],
  [...'äéñøßÆœ'],
  ['\u1C89', '\u1C8A', '\uA7CB', '\uA7DC', '\u{10D50}', '\u{10D70}', '\u0528', '\u037F', '\u08A1', '\u1AB0', '\u{1E900}', '\u{11D00}'],
  ['🙂', '😀', '🫠', '🪿', '🛻', '₿', '₺'],
  ['中', '一', '\u{2B820}', '\u{30000}', '\u9FCD', '\u{17000}', 'あ', 'ア'],
];
const pick = () => { const p = pools[rnd(pools.length)]; return p[rnd(p.length)]; };
const pairs = [];
for (let i = 0; i < 3000; i++) {
  const mk = () => { let s = ''; const n = 1 + rnd(3); for (let j = 0; j < n; j++) s += pick(); return s; };
  const a = mk(), b = mk();
  pairs.push([a, b, cmp(a, b)]);
}
// Random ids over the whole Unicode 17 repertoire (no controls, private
// use or surrogates), with combining marks, case pairs and expansions.
const assigned = (cp) => /\P{Cn}/u.test(String.fromCodePoint(cp)) && !/[\p{Cc}\p{Co}\p{Cs}]/u.test(String.fromCodePoint(cp));
const anyChar = () => {
  for (;;) {
    const cp = rnd(0x32400);
    if (assigned(cp)) return String.fromCodePoint(cp);
  }
};
const extras = [...'aAéæ\u0301\u0308ǆ½-_ 1ßSs'];
const repertoire = [];
for (let i = 0; i < 3000; i++) {
  const mk = () => { let s = ''; const n = 1 + rnd(4); for (let j = 0; j < n; j++) s += rnd(3) ? anyChar() : extras[rnd(extras.length)]; return s; };
  const a = mk(), b = rnd(4) ? mk() : a.toUpperCase();
  repertoire.push([a, b, cmp(a, b)]);
}
fs.writeFileSync('testdata/collation/icu78.json', JSON.stringify({
  generatedBy: `node ${process.version} (ICU ${process.versions.icu}, Unicode ${process.versions.unicode}): String.prototype.localeCompare`,
  sorted, pairs, repertoire,
}, null, 0) + '\n');
console.log(sorted.join(' '));
