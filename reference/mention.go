package reference

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"
)

// ParsedReference is one mention found in a text, in appearance order.
type ParsedReference struct {
	SessionID string `json:"sessionId"`
	Label     string `json:"label"`
}

// MentionKind tells which form a mention was written in.
type MentionKind int

// Mention forms.
const (
	// MentionMarkdown is @[label](dsh-session:...).
	MentionMarkdown MentionKind = iota + 1
	// MentionBare is a bare dsh-session:<payload>.
	MentionBare
)

// String returns "markdown" or "bare".
func (k MentionKind) String() string {
	switch k {
	case MentionMarkdown:
		return "markdown"
	case MentionBare:
		return "bare"
	}
	return "MentionKind(?)"
}

// Span is a half-open byte range [Start, End) in the parsed text.
type Span struct{ Start, End int }

// Mention is one accepted mention with its source location.
type Mention struct {
	Kind      MentionKind
	SessionID string
	// Label is the unescaped markdown label, or the id of a bare mention.
	Label string
	// Span covers the whole match; URISpan the dsh-session: URI inside it;
	// LabelSpan the raw (escaped) label of a markdown mention, between "@["
	// and "]". A bare mention has no label text: its LabelSpan is the empty
	// span at URISpan.Start.
	Span, URISpan, LabelSpan Span
	URI                      string
}

// Problem is a rejected URI found by ScanText.
type Problem struct {
	// Kind is MentionMarkdown for an explicit @[..](uri) whose uri is bad,
	// MentionBare for a bare dsh-session:<base64url-shaped payload>.
	Kind    MentionKind
	URI     string
	Span    Span // the whole match
	URISpan Span
	Err     *Error
}

// ParseResult is parseSessionReferenceText's output plus source spans.
type ParseResult struct {
	Text       string            `json:"text"`
	References []ParsedReference `json:"references"`
	Mentions   []Mention         `json:"-"`
}

// ParseText implements dsh parseSessionReferenceText. The text is scanned
// left to right for the pattern
//
//	@\[((?:\\.|[^\\\]])*)\]\((dsh-session:[^)\s]*)\)|dsh-session:[A-Za-z0-9_-]+
//
// with JS semantics (Unicode \s; "." excludes line terminators): at each
// position the markdown form is tried first, then the bare form, and
// scanning resumes after each match. Every match is replaced by "@" + label
// (the unescaped markdown label, or the decoded id of a bare URI) and
// appended to References; nothing is rescanned. Every matched URI must
// decode (DecodeURI); the first one that does not fails the whole parse
// with its *Error and no partial result.
func ParseText(text string) (ParseResult, error) {
	res := ParseResult{Text: text, References: []ParsedReference{}, Mentions: []Mention{}}
	var out strings.Builder
	last := 0
	var err *Error
	scanMentions(text, func(m Mention, p *Problem) bool {
		if p != nil {
			err = p.Err
			return false
		}
		if out.Len() == 0 {
			out.Grow(len(text))
		}
		out.WriteString(text[last:m.Span.Start])
		out.WriteByte('@')
		out.WriteString(m.Label)
		last = m.Span.End
		res.References = append(res.References, ParsedReference{SessionID: m.SessionID, Label: m.Label})
		res.Mentions = append(res.Mentions, m)
		return true
	})
	if err != nil {
		return ParseResult{}, err
	}
	if len(res.Mentions) > 0 {
		out.WriteString(text[last:])
		res.Text = out.String()
	}
	return res, nil
}

// ScanText is the tolerant scan: every accepted mention and every rejected
// URI in text, in appearance order, never failing. It finds exactly the
// matches ParseText finds, so ParseText fails iff problems is non-empty
// (with the first problem's error) and otherwise returns these mentions.
func ScanText(text string) (mentions []Mention, problems []Problem) {
	return scanTextMemo(text, memoThreshold(text))
}

// scanTextMemo is ScanText with the scanner's memo threshold (see
// scanMentionsMemo).
func scanTextMemo(text string, memoAfter int) (mentions []Mention, problems []Problem) {
	scanMentionsMemo(text, memoAfter, func(m Mention, p *Problem) bool {
		if p != nil {
			problems = append(problems, *p)
		} else {
			mentions = append(mentions, m)
		}
		return true
	})
	return mentions, problems
}

// FormatMention returns @[escaped label](URI(sessionID)); a nil label means
// the id is the label. An empty label is kept.
func FormatMention(sessionID string, label *string) string {
	l := sessionID
	if label != nil {
		l = *label
	}
	// Sized for the URI of an id that needs no JSON escapes.
	b := make([]byte, 0, len("@[](")+len(l)+len(URIPrefix)+base64.RawURLEncoding.EncodedLen(len(sessionID)+2)+len(")"))
	return string(AppendMention(b, sessionID, label))
}

// AppendMention appends FormatMention(sessionID, label) to dst.
func AppendMention(dst []byte, sessionID string, label *string) []byte {
	l := sessionID
	if label != nil {
		l = *label
	}
	dst = append(appendEscapedLabel(append(dst, "@["...), l), "]("...)
	return append(appendURI(dst, sessionID), ')')
}

// appendEscapedLabel appends label with a backslash before every `\` and
// every `]`, changing nothing else, as dsh's mention formatter does.
func appendEscapedLabel(dst []byte, label string) []byte {
	for i := 0; i < len(label); i++ {
		if c := label[i]; c == '\\' || c == ']' {
			dst = append(dst, '\\')
		}
		dst = append(dst, label[i])
	}
	return dst
}

// unescapeLabel undoes appendEscapedLabel on a raw markdown label: every backslash
// followed by a code point that is not a line terminator becomes that code
// point. Any other backslash (at the end, or before \n, \r, U+2028, U+2029)
// stays; the mention pattern never captures such a label.
func unescapeLabel(raw string) string {
	i := strings.IndexByte(raw, '\\')
	if i < 0 {
		return raw
	}
	var b strings.Builder
	b.Grow(len(raw))
	b.WriteString(raw[:i])
	for i < len(raw) {
		c := raw[i]
		if c == '\\' && i+1 < len(raw) {
			if _, size, ok := escapableAt(raw, i+1); ok {
				b.WriteString(raw[i+1 : i+1+size])
				i += 1 + size
				continue
			}
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

// escapableAt reports whether the code point at s[i] may follow a backslash
// in a label escape (the regex "." without the s flag: anything but a line
// terminator) and returns it and its size. An invalid byte counts as one
// code point.
func escapableAt(s string, i int) (rune, int, bool) {
	r, size := utf8.DecodeRuneInString(s[i:])
	switch r {
	case '\n', '\r', '\u2028', '\u2029':
		return r, size, false
	}
	return r, size, true
}

// scanMentions runs the mention pattern over text and calls yield for
// every match in order, with either an accepted Mention or a Problem. It
// stops when yield returns false.
func scanMentions(text string, yield func(Mention, *Problem) bool) {
	scanMentionsMemo(text, memoThreshold(text), yield)
}

// memoThreshold is how many bytes the label and URI runs of a scan of text
// may cover before the scanner memoizes them: beyond twice the text, the
// scan is on its way to quadratic.
func memoThreshold(text string) int { return 2*len(text) + 256 }

// scanMentionsMemo is scanMentions with the number of bytes the label and
// URI runs may scan before the scanner starts memoizing them (tests force
// 0 to check that both ways agree).
func scanMentionsMemo(text string, memoAfter int, yield func(Mention, *Problem) bool) {
	s := mentionScanner{text: text, memoAfter: memoAfter}
	for i := 0; i < len(text); {
		j := strings.IndexAny(text[i:], "@d")
		if j < 0 {
			return
		}
		i += j
		m, ok := s.matchAt(i)
		if !ok {
			i++
			continue
		}
		if !yield(m.resolve(text)) {
			return
		}
		i = m.span.End
	}
}

// rawMatch is one match of the pattern, before its URI is decoded.
type rawMatch struct {
	kind                 MentionKind
	span, uriSpan, label Span
}

// resolve decodes m's URI into an accepted Mention or a Problem.
func (m rawMatch) resolve(text string) (Mention, *Problem) {
	uri := text[m.uriSpan.Start:m.uriSpan.End]
	id, ok := decodeURI(uri)
	if !ok {
		return Mention{}, &Problem{Kind: m.kind, URI: uri, Span: m.span, URISpan: m.uriSpan, Err: invalidURIError(uri)}
	}
	mention := Mention{Kind: m.kind, SessionID: id, Label: id, Span: m.span, URISpan: m.uriSpan, LabelSpan: m.label, URI: uri}
	if m.kind == MentionMarkdown {
		mention.Label = unescapeLabel(text[m.label.Start:m.label.End])
	}
	return mention, nil
}

// mentionScanner matches the pattern at given positions. A failed
// markdown attempt can scan far ahead, so texts with many "@[" would take
// quadratic time (the JS regex does; we need not): once the label and URI
// runs have scanned more than memoAfter bytes, every run end is memoized
// per byte offset, which makes the rest of the scan linear.
type mentionScanner struct {
	text      string
	memoAfter int     // bytes to scan before memoizing
	scanned   int     // bytes scanned by unmemoized runs
	labelStop []int32 // 0 = unknown, else stop offset + 1
	uriStop   []int32
}

// matchAt tries the markdown form, then the bare form, at offset i.
func (s *mentionScanner) matchAt(i int) (rawMatch, bool) {
	text := s.text
	switch text[i] {
	case '@':
		if i+1 >= len(text) || text[i+1] != '[' {
			return rawMatch{}, false
		}
		labelStart := i + 2
		q := s.runEnd(&s.labelStop, labelStart, labelUnitAt)
		// The label must be closed by "](" + the URI prefix.
		if q+2 > len(text) || text[q] != ']' || text[q+1] != '(' || !strings.HasPrefix(text[q+2:], URIPrefix) {
			return rawMatch{}, false
		}
		uriStart := q + 2
		r := s.runEnd(&s.uriStop, uriStart+len(URIPrefix), uriCharAt)
		if r >= len(text) || text[r] != ')' {
			return rawMatch{}, false
		}
		return rawMatch{
			kind:    MentionMarkdown,
			span:    Span{i, r + 1},
			uriSpan: Span{uriStart, r},
			label:   Span{labelStart, q},
		}, true
	case 'd':
		if !strings.HasPrefix(text[i:], URIPrefix) {
			return rawMatch{}, false
		}
		end := i + len(URIPrefix)
		for end < len(text) && isBase64URLByte(text[end]) {
			end++
		}
		if end == i+len(URIPrefix) {
			return rawMatch{}, false
		}
		return rawMatch{kind: MentionBare, span: Span{i, end}, uriSpan: Span{i, end}, label: Span{i, i}}, true
	}
	return rawMatch{}, false
}

// runEnd follows unit(text, p) (which returns the size of the unit at p,
// or 0 when no unit starts there) from p and returns the offset where the
// run stops.
func (s *mentionScanner) runEnd(memo *[]int32, p int, unit func(string, int) int) int {
	text := s.text
	if *memo == nil {
		if s.scanned < s.memoAfter || len(text) >= 1<<31-1 {
			stop := p
			for n := unit(text, stop); n > 0; n = unit(text, stop) {
				stop += n
			}
			s.scanned += stop - p
			return stop
		}
		*memo = make([]int32, len(text)+1)
	}
	m := *memo
	stop := p
	for m[stop] == 0 {
		n := unit(text, stop)
		if n == 0 {
			m[stop] = int32(stop) + 1
			break
		}
		stop += n
	}
	end := int(m[stop]) - 1
	for q := p; q < stop; q += unit(text, q) {
		m[q] = int32(end) + 1
	}
	return end
}

// labelUnitAt is the size of the label unit at text[p]: a backslash plus
// one code point that is not a line terminator, or one code point other
// than `\` and `]`; 0 when none starts there.
func labelUnitAt(text string, p int) int {
	if p >= len(text) {
		return 0
	}
	switch text[p] {
	case ']':
		return 0
	case '\\':
		if p+1 >= len(text) {
			return 0
		}
		if _, size, ok := escapableAt(text, p+1); ok {
			return 1 + size
		}
		return 0
	}
	_, size := utf8.DecodeRuneInString(text[p:])
	return size
}

// uriCharAt is the size of the code point at text[p] when it may be part of
// a markdown URI ([^)\s] with JS's Unicode \s), else 0.
func uriCharAt(text string, p int) int {
	if p >= len(text) || text[p] == ')' {
		return 0
	}
	r, size := utf8.DecodeRuneInString(text[p:])
	if IsJSWhitespace(r) {
		return 0
	}
	return size
}
