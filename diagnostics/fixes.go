package diagnostics

import (
	"github.com/dsh-lsp/dsh-lsp/completion"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// Fix is one quick fix: replace Span with NewText.
type Fix struct {
	Title   string
	Span    reference.Span
	NewText string
	// Code is the diagnostic code the fix resolves ("" if none).
	Code      string
	Preferred bool
}

// Fix titles.
const (
	TitleCanonical = "Replace with canonical URI"
	TitleConvert   = "Convert bare URI to mention"
	TitleRemoveDup = "Remove duplicate mention"
)

// Fixes returns the quick fixes for the mentions of text that overlap the
// byte range [start, end]:
//   - "Replace with canonical URI" for a rejected URI whose payload decodes
//     leniently to a string id;
//   - "Convert bare URI to mention" for an accepted bare URI, labelled with
//     titleOf(id) on one line (completion.InsertLabel; nil: the id);
//   - "Remove duplicate mention" for a mention of an id cited earlier.
func Fixes(text string, start, end int, titleOf func(id string) *string) []Fix {
	mentions, problems := reference.ScanText(text)
	overlaps := func(s reference.Span) bool { return s.Start <= end && start <= s.End }
	var out []Fix
	for _, p := range problems {
		if !overlaps(p.Span) {
			continue
		}
		if canon, ok := CanonicalURI(p.URI); ok {
			code := CodeNoncanonicalURI
			if p.Kind == reference.MentionMarkdown {
				code = CodeInvalidURI
			}
			out = append(out, Fix{Title: TitleCanonical + " " + canon, Span: p.URISpan, NewText: canon, Code: code, Preferred: true})
		}
	}
	seen := map[string]bool{}
	for _, m := range mentions {
		dup := seen[m.SessionID]
		seen[m.SessionID] = true
		if !overlaps(m.Span) {
			continue
		}
		if m.Kind == reference.MentionBare {
			var title *string
			if titleOf != nil {
				title = titleOf(m.SessionID)
			}
			if title != nil {
				// Like a completion: the title goes into the user's
				// text, so on one line.
				one := completion.InsertLabel(*title)
				title = &one
			}
			out = append(out, Fix{Title: TitleConvert, Span: m.Span, NewText: reference.FormatMention(m.SessionID, title)})
		}
		if dup {
			out = append(out, Fix{Title: TitleRemoveDup, Span: widenOverSpace(text, m.Span), NewText: ""})
		}
	}
	return out
}

// widenOverSpace extends a span to be deleted over one preceding space when
// the deletion would otherwise leave two spaces (or a trailing space).
func widenOverSpace(text string, s reference.Span) reference.Span {
	if s.Start > 0 && text[s.Start-1] == ' ' {
		if s.End == len(text) || text[s.End] == ' ' || text[s.End] == '\n' || text[s.End] == '\r' {
			s.Start--
		}
	}
	return s
}
