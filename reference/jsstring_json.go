package reference

import "strconv"

// JSString is a string that marshals to JSON the way JS JSON.stringify
// writes it: lone surrogates (WTF-8, see the package doc) come out as
// \udxxx escapes instead of encoding/json's U+FFFD replacement, so ids such
// as the one in dsh-session:Ilx1ZDgwMHgi survive a JSON round trip.
type JSString string

// MarshalJSON implements json.Marshaler.
func (s JSString) MarshalJSON() ([]byte, error) {
	return AppendJSString(nil, string(s)), nil
}

// MarshalJSON writes {"sessionId","label"} with JSString semantics, so a
// reference to a lone-surrogate id keeps its exact id in JSON output.
func (r ParsedReference) MarshalJSON() ([]byte, error) { return appendParsedReference(nil, r) }

// MarshalJSON writes {"content","references","contextMessage"?} with
// JSString semantics: a lone surrogate in the readable content (the label
// of a bare mention of such an id) or in a reference stays \udxxx, as dsh's
// JSON.stringify writes it.
func (p PreparedText) MarshalJSON() ([]byte, error) {
	b := append([]byte(nil), `{"content":`...)
	b = AppendJSString(b, p.Content)
	b = append(b, `,"references":`...)
	b = appendParsedReferences(b, p.References)
	if p.ContextMessage != nil {
		b = append(b, `,"contextMessage":`...)
		b = p.ContextMessage.AppendJSON(b)
	}
	return append(b, '}'), nil
}

// MarshalJSON writes {"text","references"} with JSString semantics (the
// mentions command's output).
func (r ParseResult) MarshalJSON() ([]byte, error) {
	b := append([]byte(nil), `{"text":`...)
	b = AppendJSString(b, r.Text)
	b = append(b, `,"references":`...)
	b = appendParsedReferences(b, r.References)
	return append(b, '}'), nil
}

// appendParsedReferences writes refs as a JSON array; nil is [].
func appendParsedReferences(b []byte, refs []ParsedReference) []byte {
	b = append(b, '[')
	for i, r := range refs {
		if i > 0 {
			b = append(b, ',')
		}
		b, _ = appendParsedReference(b, r)
	}
	return append(b, ']')
}

func appendParsedReference(b []byte, r ParsedReference) ([]byte, error) {
	b = append(b, `{"sessionId":`...)
	b = AppendJSString(b, r.SessionID)
	b = append(b, `,"label":`...)
	b = AppendJSString(b, r.Label)
	return append(b, '}'), nil
}

// appendFields appends c as {"sessionId","label","cwd"?,"createdAt" (dsh's
// listCandidates item) without the closing brace, with JSString semantics;
// callers add more members and the brace.
func (c Candidate) appendFields(b []byte) []byte {
	b = append(b, `{"sessionId":`...)
	b = AppendJSString(b, c.SessionID)
	b = append(b, `,"label":`...)
	b = AppendJSString(b, c.Label)
	if c.CWD != nil {
		b = append(b, `,"cwd":`...)
		b = AppendJSString(b, *c.CWD)
	}
	b = append(b, `,"createdAt":`...)
	return strconv.AppendInt(b, c.CreatedAt, 10)
}

// MarshalJSON implements json.Marshaler with JSString semantics.
func (c Candidate) MarshalJSON() ([]byte, error) { return append(c.appendFields(nil), '}'), nil }

// MarshalJSON writes dsh's remote candidate item (the candidate plus
// "mention") with JSString semantics.
func (c RemoteCandidate) MarshalJSON() ([]byte, error) {
	b := c.Candidate.appendFields(nil)
	b = append(b, `,"mention":`...)
	b = AppendJSString(b, c.Mention)
	return append(b, '}'), nil
}
