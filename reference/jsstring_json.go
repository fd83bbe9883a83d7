package reference

import "github.com/dsh-lsp/dsh-lsp/internal/jsjson"

// The JSON of reference's result types is written with jsjson's writers
// (JS JSON.stringify semantics): a lone surrogate, held as WTF-8 (see the
// package doc), comes out as its \udxxx escape instead of encoding/json's
// U+FFFD, so a host that cites an id such as the one in
// dsh-session:Ilx1ZDgwMHgi cites the session that exists.

// JSString is a string that marshals to JSON the way JS JSON.stringify
// writes it (jsjson.AppendJSString), for front ends that encode their own
// shapes with encoding/json.
type JSString string

// MarshalJSON implements json.Marshaler.
func (s JSString) MarshalJSON() ([]byte, error) {
	return jsjson.AppendJSString(nil, string(s), false), nil
}

// MarshalJSON writes {"sessionId","label"}, so a reference to a
// lone-surrogate id keeps its exact id in JSON output.
func (r ParsedReference) MarshalJSON() ([]byte, error) { return r.appendJSON(nil), nil }

func (r ParsedReference) appendJSON(dst []byte) []byte {
	return jsjson.NewObject(dst).String("sessionId", r.SessionID).String("label", r.Label).Bytes()
}

// MarshalJSON writes {"content","references","contextMessage"?}: a lone
// surrogate in the readable content (the label of a bare mention of such an
// id) or in a reference stays \udxxx, as dsh's JSON.stringify writes it.
func (p PreparedText) MarshalJSON() ([]byte, error) {
	o := jsjson.NewObject(nil).String("content", p.Content).Raw("references", appendParsedReferences(nil, p.References))
	if p.ContextMessage != nil {
		o.Raw("contextMessage", p.ContextMessage.AppendJSON(nil))
	}
	return o.Bytes(), nil
}

// MarshalJSON writes {"text","references"} (the mentions command's output).
func (r ParseResult) MarshalJSON() ([]byte, error) {
	return jsjson.NewObject(nil).String("text", r.Text).Raw("references", appendParsedReferences(nil, r.References)).Bytes(), nil
}

// appendParsedReferences writes refs as a JSON array; nil is [].
func appendParsedReferences(b []byte, refs []ParsedReference) []byte {
	b = append(b, '[')
	for i, r := range refs {
		if i > 0 {
			b = append(b, ',')
		}
		b = r.appendJSON(b)
	}
	return append(b, ']')
}

// members writes c's members {"sessionId","label","cwd"?,"createdAt"}
// (dsh's listCandidates item) to o; the shapes that extend a candidate
// (RemoteCandidate, CandidateItem) add theirs before closing it.
func (c Candidate) members(o *jsjson.Object) *jsjson.Object {
	o.String("sessionId", c.SessionID).String("label", c.Label)
	if c.CWD != nil {
		o.String("cwd", *c.CWD)
	}
	return o.Int("createdAt", c.CreatedAt)
}

// AppendJSON appends c's JSON object to dst (the completion item data is
// this object, written for every item of every completion response).
func (c Candidate) AppendJSON(dst []byte) []byte { return c.members(jsjson.NewObject(dst)).Bytes() }

// MarshalJSON implements json.Marshaler.
func (c Candidate) MarshalJSON() ([]byte, error) { return c.AppendJSON(nil), nil }

// MarshalJSON writes dsh's remote candidate item: the candidate plus
// "mention".
func (c RemoteCandidate) MarshalJSON() ([]byte, error) {
	return c.Candidate.members(jsjson.NewObject(nil)).String("mention", c.Mention).Bytes(), nil
}
