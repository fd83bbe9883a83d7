package protocol

import (
	"encoding/json"

	"go.lsp.dev/jsonrpc2"
)

// Codec is the jsonrpc2 codec of both ends of a dsh-lsp connection (the
// server and lsptest's fake editor): pre-encoded values (json.RawMessage,
// jsonrpc2.RawMessage) pass through unchanged, everything else is encoded
// by Marshal (no HTML escaping), and decoding into a raw message copies the
// bytes instead of re-validating them.
type Codec struct{}

// Marshal encodes v; a nil raw message encodes as null.
func (Codec) Marshal(v any) ([]byte, error) {
	switch m := v.(type) {
	case jsonrpc2.RawMessage:
		if m == nil {
			return []byte("null"), nil
		}
		return m, nil
	case json.RawMessage:
		if m == nil {
			return []byte("null"), nil
		}
		return m, nil
	}
	return Marshal(v)
}

// Unmarshal decodes data into v with encoding/json; a *json.RawMessage or
// *jsonrpc2.RawMessage receives a copy of data.
func (Codec) Unmarshal(data []byte, v any) error {
	switch p := v.(type) {
	case *jsonrpc2.RawMessage:
		*p = append(jsonrpc2.RawMessage(nil), data...)
		return nil
	case *json.RawMessage:
		*p = append(json.RawMessage(nil), data...)
		return nil
	}
	return json.Unmarshal(data, v)
}
