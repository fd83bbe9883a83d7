package mcpserver

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// Strings from a store are WTF-8 (internal/jsjson): a lone UTF-16 surrogate
// of a session id, title or message is kept as its 3-byte form, and every
// JSON text dsh-lsp writes carries it as a \udxxx escape, as dsh's
// JSON.stringify does. The SDK writes its result types with encoding/json,
// which turns those bytes into U+FFFD; the types below write the WTF-8
// strings of the MCP results themselves (text blocks, resource contents,
// resource names and titles) and leave the rest of the shape to the SDK.

// placeholderPrefix starts the stand-ins marshalWTF8 puts in place of the
// strings it writes itself: random per process, so that no store content
// can contain one.
var placeholderPrefix = func() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "dsh-lsp-wtf8-" + hex.EncodeToString(b[:]) + "-"
}()

// needsWTF8 reports whether encoding/json would not write s as it is meant
// (s holds a WTF-8 surrogate or other bytes that are not UTF-8).
func needsWTF8(s string) bool { return !utf8.ValidString(s) }

// marshalWTF8 marshals v as encoding/json does, except that the strings
// fields point to (fields of v) are written as JSON.stringify writes the JS
// strings they stand for. v must not be shared: the fields are swapped for
// placeholders during the call.
func marshalWTF8(v any, fields ...*string) ([]byte, error) {
	type swap struct {
		field      *string
		orig, name string
	}
	var swaps []swap
	for _, f := range fields {
		if needsWTF8(*f) {
			sw := swap{f, *f, placeholderPrefix + strconv.Itoa(len(swaps))}
			*f = sw.name
			swaps = append(swaps, sw)
		}
	}
	b, err := json.Marshal(v)
	for _, sw := range swaps {
		*sw.field = sw.orig
	}
	if err != nil {
		return nil, err
	}
	for _, sw := range swaps {
		b = bytes.Replace(b, []byte(`"`+sw.name+`"`), []byte(jsjson.Quote(sw.orig)), 1)
	}
	return b, nil
}

// wtf8Text is a text content block whose text is WTF-8.
type wtf8Text struct{ *mcp.TextContent }

// textBlock is a text content block holding s (WTF-8) exactly.
func textBlock(s string) mcp.Content { return wtf8Text{&mcp.TextContent{Text: s}} }

// MarshalJSON writes the block as mcp.TextContent does, with the text
// written as JSON.stringify writes it.
func (c wtf8Text) MarshalJSON() ([]byte, error) {
	cp := *c.TextContent
	return marshalWTF8(&cp, &cp.Text)
}

// wtf8ReadResult is a resources/read result whose texts are WTF-8.
type wtf8ReadResult struct{ *mcp.ReadResourceResult }

// MarshalJSON writes the result as the SDK does, with each content's text
// written as JSON.stringify writes it.
func (r wtf8ReadResult) MarshalJSON() ([]byte, error) {
	cp := *r.ReadResourceResult
	cp.Contents = make([]*mcp.ResourceContents, len(r.Contents))
	var fields []*string
	for i, c := range r.Contents {
		if c == nil {
			continue
		}
		cc := *c
		cp.Contents[i] = &cc
		fields = append(fields, &cc.Text)
	}
	return marshalWTF8(&cp, fields...)
}

// wtf8ListResult is a resources/list result whose names and titles (session
// labels) are WTF-8.
type wtf8ListResult struct{ *mcp.ListResourcesResult }

// MarshalJSON writes the result as the SDK does, with each resource's name
// and title written as JSON.stringify writes them.
func (r wtf8ListResult) MarshalJSON() ([]byte, error) {
	cp := *r.ListResourcesResult
	cp.Resources = make([]*mcp.Resource, len(r.Resources))
	var fields []*string
	for i, res := range r.Resources {
		if res == nil {
			continue
		}
		rc := *res
		cp.Resources[i] = &rc
		fields = append(fields, &rc.Name, &rc.Title, &rc.Description)
	}
	return marshalWTF8(&cp, fields...)
}
