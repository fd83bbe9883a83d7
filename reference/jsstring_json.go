package reference

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
func (r ParsedReference) MarshalJSON() ([]byte, error) {
	b := append([]byte(nil), `{"sessionId":`...)
	b = AppendJSString(b, r.SessionID)
	b = append(b, `,"label":`...)
	b = AppendJSString(b, r.Label)
	return append(b, '}'), nil
}
