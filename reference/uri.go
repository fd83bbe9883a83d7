package reference

import (
	"encoding/base64"
	"strings"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// URIPrefix is the scheme prefix of a session reference URI.
const URIPrefix = "dsh-session:"

// EncodeURI returns dsh-session:<base64url-nopad(utf8(JSON.stringify(id)))>.
// id is WTF-8 (see the package doc), so ids holding lone surrogates encode
// exactly as dsh encodes the JS string.
func EncodeURI(id string) string {
	return string(appendURI(nil, id))
}

// appendURI appends EncodeURI(id) to dst. Completion writes one for every
// item of every answer: the JSON literal stays on the stack when short.
func appendURI(dst []byte, id string) []byte {
	var stack [128]byte
	lit := jsjson.AppendJSString(stack[:0], id, false)
	dst = append(dst, URIPrefix...)
	return base64.RawURLEncoding.AppendEncode(dst, lit)
}

// DecodeURI decodes a canonical session reference URI to its id. Errors are
// *Error with CodeInvalidReference and message
// `invalid session reference URI <JSON-quoted uri>`.
//
// Like dsh it checks the prefix (case-sensitive) and the payload alphabet
// (non-empty, A–Z a–z 0–9 _ -), decodes the payload leniently as base64url
// and then as UTF-8 and JSON, requires a JSON string, and finally requires
// that re-encoding the id gives back exactly uri. The canonical check is
// what rejects padding, non-zero trailing bits, JSON whitespace, needless
// escapes and invalid UTF-8. A lone surrogate escape (\ud800) decodes to
// its WTF-8 form and round-trips.
func DecodeURI(uri string) (string, error) {
	id, ok := decodeURI(uri)
	if !ok {
		return "", invalidURIError(uri)
	}
	return id, nil
}

// invalidURIError is dsh's error for a URI that does not decode.
func invalidURIError(uri string) *Error {
	return newError(CodeInvalidReference, "invalid session reference URI "+jsjson.Quote(uri), nil)
}

func decodeURI(uri string) (string, bool) {
	payload, ok := strings.CutPrefix(uri, URIPrefix)
	if !ok || payload == "" {
		return "", false
	}
	for i := 0; i < len(payload); i++ {
		if !isBase64URLByte(payload[i]) {
			return "", false
		}
	}
	// Lenient base64url decoding, as Node's Buffer.from(s, "base64url"):
	// non-zero trailing bits are ignored and a dangling sixth-bit character
	// is dropped. The canonical check below rejects both.
	usable := payload
	if len(usable)%4 == 1 {
		usable = usable[:len(usable)-1]
	}
	raw, err := base64.RawURLEncoding.DecodeString(usable)
	if err != nil {
		return "", false
	}
	// JS decodes the bytes with TextDecoder (invalid sequences become
	// U+FFFD) and then JSON.parse; JSON text may have whitespace around the
	// value.
	v, err := jsjson.Parse(jsjson.RepairUTF8(raw))
	if err != nil || v.Kind != jsjson.KindString {
		return "", false
	}
	if EncodeURI(v.Str) != uri {
		return "", false
	}
	return v.Str, true
}

// isBase64URLByte reports whether c is in the base64url alphabet
// A–Z a–z 0–9 _ -.
func isBase64URLByte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
