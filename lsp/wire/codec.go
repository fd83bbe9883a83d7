package wire

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// Codec is the jsonrpc2 codec of both ends of a dsh-lsp connection (the
// server and lsptest's fake editor): pre-encoded values (json.RawMessage,
// jsonrpc2.RawMessage) pass through unchanged, go.lsp.dev/protocol's types
// go through its codec, everything else (this package's types, dsh/*
// params and results) through encoding/json without HTML escaping
// (Marshal); decoding into a raw message copies the bytes instead of
// re-validating them.
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
	var b []byte
	var err error
	if isLibraryType(v) {
		b, err = protocol.Marshal(addressable(v))
	} else {
		b, err = jsjson.Marshal(v)
	}
	// Strings the server writes itself keep lone surrogates as \udxxx
	// escapes; raw bytes that are not UTF-8 (a file name, text quoted
	// from a request) become U+FFFD, so that every frame is valid UTF-8.
	return jsjson.RepairUTF8(b), err
}

// addressable returns a pointer to a copy of a struct value v: the
// library's reflection-free writers have pointer receivers, so a struct
// passed by value would take its reflection fallback.
func addressable(v any) any {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Struct {
		return v
	}
	p := reflect.New(rv.Type())
	p.Elem().Set(rv)
	return p.Interface()
}

// Unmarshal decodes data into v (see Decode); a *json.RawMessage or
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
	return Decode(data, v)
}

// Decode decodes data into v: a go.lsp.dev/protocol type with the
// library's union-aware decoder (which replaces invalid UTF-8 and escaped
// lone surrogates with U+FFFD, as encoding/json does), anything else with
// encoding/json.
func Decode(data []byte, v any) error {
	if isLibraryType(v) {
		if err := protocol.Unmarshal(data, v); err != nil {
			return near(err, data)
		}
		return nil
	}
	return json.Unmarshal(data, v)
}

// near adds to a decoding error of go.lsp.dev/protocol, which gives only a
// byte offset ("protocol: invalid JSON object at offset 16"), the text
// found there, so that the -32602 message says what was wrong.
func near(err error, data []byte) error {
	const marker = " at offset "
	msg := err.Error()
	i := strings.LastIndex(msg, marker)
	if i < 0 {
		return err
	}
	off, convErr := strconv.Atoi(msg[i+len(marker):])
	if convErr != nil || off < 0 || off > len(data) {
		return err
	}
	// About 40 bytes of what follows, cut at a character boundary and as
	// valid UTF-8 (the body is the client's and may hold any bytes).
	rest := data[off:]
	if len(rest) > 40 {
		cut := 40
		for cut > 0 && !utf8.RuneStart(rest[cut]) {
			cut--
		}
		rest = append(rest[:cut:cut], "…"...)
	}
	return fmt.Errorf("%w (found %s)", err, jsjson.RepairUTF8(rest))
}

// isLibraryType reports whether v is (a pointer to) a type of
// go.lsp.dev/protocol.
func isLibraryType(v any) bool {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t != nil && t.PkgPath() == libraryPath
}

// libraryPath is go.lsp.dev/protocol's import path.
var libraryPath = reflect.TypeFor[protocol.Position]().PkgPath()
