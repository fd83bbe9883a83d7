package reference

import (
	"errors"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/internal/golden/goldenfile"
	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// goldenCase is one {name, input, output} case of testdata/golden, parsed
// with JS semantics so ids with lone surrogates survive (encoding/json would
// turn "\ud800" into U+FFFD).
type goldenCase struct {
	name   string
	input  *jsjson.Value
	output *jsjson.Value
}

// loadGolden reads testdata/golden/<group>.json with goldenfile.Load (these
// tests are inside package reference, which package golden imports) and
// parses each case's raw input and output with jsjson.Parse.
func loadGolden(t *testing.T, group string) []goldenCase {
	t.Helper()
	var cases []goldenCase
	for _, c := range goldenfile.Load(t, group) {
		cases = append(cases, goldenCase{
			name:   c.Name,
			input:  parseGoldenPart(t, group, c.Name, c.Input),
			output: parseGoldenPart(t, group, c.Name, c.Output),
		})
	}
	return cases
}

// parseGoldenPart parses a case's raw input or output; an absent part is
// nil.
func parseGoldenPart(t *testing.T, group, name string, raw []byte) *jsjson.Value {
	t.Helper()
	if len(raw) == 0 {
		return nil
	}
	v, err := jsjson.Parse(raw)
	if err != nil {
		t.Fatalf("golden %s/%s: %v", group, name, err)
	}
	return v
}

// str returns the string at key of object v, failing the test when absent.
func str(t *testing.T, v *jsjson.Value, key string) string {
	t.Helper()
	f := v.Field(key)
	if f == nil || f.Kind != jsjson.KindString {
		t.Fatalf("field %q: want a string", key)
	}
	return f.Str
}

// goldenError returns the expected {code, message} of an error output, or
// ok=false when the output is a success.
func goldenError(t *testing.T, out *jsjson.Value) (code *string, message string, ok bool) {
	t.Helper()
	e := out.Field("error")
	if e == nil {
		return nil, "", false
	}
	if c := e.Field("code"); c != nil && c.Kind == jsjson.KindString {
		code = &c.Str
	}
	return code, str(t, e, "message"), true
}

// checkError compares err with the golden error (code and exact message).
func checkError(t *testing.T, err error, code *string, message string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %v %q", code, message)
	}
	if err.Error() != message {
		t.Errorf("message = %q, want %q", err.Error(), message)
	}
	got := CodeOf(err)
	if code == nil {
		if got != "" {
			t.Errorf("code = %q, want none", got)
		}
	} else if string(got) != *code {
		t.Errorf("code = %q, want %q", got, *code)
	}
}

// errNotSerializable is the plain TypeError dsh's tag-safe serializer
// throws when a value serializes to nothing (JS undefined).
var errNotSerializable = errors.New("session-reference data is not JSON-serializable")

// tagSafe re-encodes the JSON text raw as dsh's tag-safe serializer
// (JSON.stringify, then every "<" as \u003c) writes JSON.parse(raw), with
// the jsjson reader and writer production uses.
func tagSafe(raw []byte) ([]byte, error) {
	if jsjson.SkipSpace(raw, 0) == len(raw) {
		return nil, errNotSerializable
	}
	v, err := jsjson.Parse(jsjson.RepairUTF8(raw))
	if err != nil {
		return nil, err
	}
	return jsjson.AppendValue(nil, v, true), nil
}

func TestGoldenSerialize(t *testing.T) {
	cases := loadGolden(t, "serialize")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var raw []byte
			if v := c.input.Field("value"); v != nil {
				raw = jsjson.AppendValue(nil, v, false) // re-encode the JS value
			}
			got, err := tagSafe(raw)
			if code, msg, isErr := goldenError(t, c.output); isErr {
				checkError(t, err, code, msg)
				if !errors.Is(err, errNotSerializable) {
					t.Errorf("err = %v, want errNotSerializable", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("tagSafe: %v", err)
			}
			if want := str(t, c.output, "serialized"); string(got) != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
}
