package reference

import (
	"math"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// This file holds the JSON shapes of dsh's session-reference API as every
// front end (the LSP server's dsh/candidates and dsh/prepare, the CLI, the
// MCP tools) returns them. They live in the core, not in a front end, so
// that no front end imports another for a result shape; none of them
// mutates its input.

// CandidateItem is one item of a candidate list (dsh/candidates, the CLI's
// candidates command, the MCP dsh_candidates tool).
type CandidateItem struct {
	SessionID string  `json:"sessionId"`
	Label     string  `json:"label"`
	CWD       *string `json:"cwd,omitempty"`
	CreatedAt int64   `json:"createdAt"`
	URI       string  `json:"uri"`
	Mention   string  `json:"mention"`
}

// CandidateItems converts candidates to candidate-list items; the result is
// never nil, so an empty list encodes as [].
func CandidateItems(cands []Candidate) []CandidateItem {
	out := make([]CandidateItem, 0, len(cands))
	for _, c := range cands {
		label := c.Label
		out = append(out, CandidateItem{
			SessionID: c.SessionID, Label: c.Label, CWD: c.CWD, CreatedAt: c.CreatedAt,
			URI: EncodeURI(c.SessionID), Mention: FormatMention(c.SessionID, &label),
		})
	}
	return out
}

// CheckCandidateLimit validates a candidate limit given as a JS number, as
// dsh does: a positive safe integer, else an *Error with
// CodeInvalidReference (NaN and fractions included).
func CheckCandidateLimit(v float64) (int64, error) {
	if v != math.Trunc(v) || v <= 0 || v > maxSafeInteger || math.IsNaN(v) {
		return 0, newError(CodeInvalidReference, "candidate limit must be a positive safe integer", nil)
	}
	return int64(v), nil
}

// MarshalPrepared encodes a prepare result as CONTRACT §5 shows it:
// {"content","references","contextMessage"?}, without HTML escaping. A nil
// References list is written as []; pt itself is not changed.
func MarshalPrepared(pt *PreparedText) ([]byte, error) {
	out := *pt
	if out.References == nil {
		out.References = []ParsedReference{}
	}
	return jsjson.Marshal(&out)
}

// MarshalJSON writes the item with JS JSON.stringify string semantics
// (AppendJSString): an id or title holding a lone UTF-16 surrogate (WTF-8
// inside dsh-lsp) keeps its \udxxx escape, as dsh writes it, instead of
// encoding/json's U+FFFD, so a host that cites sessionId cites the session
// that exists.
func (c CandidateItem) MarshalJSON() ([]byte, error) {
	cand := Candidate{SessionID: c.SessionID, Label: c.Label, CWD: c.CWD, CreatedAt: c.CreatedAt}
	return cand.members(jsjson.NewObject(nil)).String("uri", c.URI).String("mention", c.Mention).Bytes(), nil
}
