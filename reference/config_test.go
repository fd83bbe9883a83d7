package reference

import (
	"encoding/json"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

func TestGoldenConfig(t *testing.T) {
	for _, c := range loadGolden(t, "config") {
		t.Run(c.name, func(t *testing.T) {
			raw := jsjson.AppendValue(nil, c.input.Field("config"), false)
			cfg, err := ConfigFromJSON(raw)
			if code, msg, isErr := goldenError(t, c.output); isErr {
				checkError(t, err, code, msg)
				return
			}
			if err != nil {
				t.Fatalf("ConfigFromJSON(%s): %v", raw, err)
			}
			if err := cfg.Validate(); err != nil {
				t.Errorf("Validate(%+v): %v", cfg, err)
			}
		})
	}
}

func TestConfigFromJSON(t *testing.T) {
	const (
		notPositive = " must be a positive safe integer"
		tooMany     = "session-reference: maxReferences must not exceed 3"
	)
	tests := []struct {
		in   string
		want Config
		err  string
	}{
		{`{}`, Config{3, 50, 65536}, ""},
		{``, Config{3, 50, 65536}, ""},
		{`null`, Config{3, 50, 65536}, ""},
		{`{"maxReferences":1}`, Config{1, 50, 65536}, ""},
		{`{"maxReferences":3}`, Config{3, 50, 65536}, ""},
		{`{"maxReferences":3.0,"candidateLimit":2e1}`, Config{3, 20, 65536}, ""},
		{`{"maxReferenceBytes":1}`, Config{3, 50, 1}, ""},
		{`{"candidateLimit":9007199254740991}`, Config{3, 9007199254740991, 65536}, ""},
		{`{"maxReferences":null,"sessionsDir":"/x","target":{"cwd":"/w"}}`, Config{3, 50, 65536}, ""},
		{`{"maxReferences":2,"maxReferences":1}`, Config{1, 50, 65536}, ""},
		{`{"maxReferences":0}`, Config{}, "maxReferences" + notPositive},
		{`{"maxReferences":4}`, Config{}, tooMany},
		{`{"maxReferences":1.5}`, Config{}, "maxReferences" + notPositive},
		{`{"maxReferences":-1}`, Config{}, "maxReferences" + notPositive},
		{`{"maxReferences":-0}`, Config{}, "maxReferences" + notPositive},
		{`{"maxReferences":"2"}`, Config{}, "maxReferences" + notPositive},
		{`{"maxReferences":true}`, Config{}, "maxReferences" + notPositive},
		{`{"maxReferences":[1]}`, Config{}, "maxReferences" + notPositive},
		{`{"candidateLimit":0}`, Config{}, "candidateLimit" + notPositive},
		{`{"maxReferenceBytes":0}`, Config{}, "maxReferenceBytes" + notPositive},
		{`{"maxReferenceBytes":9007199254740992}`, Config{}, "maxReferenceBytes" + notPositive},
		{`{"maxReferenceBytes":1e400}`, Config{}, "maxReferenceBytes" + notPositive},
		// Check order: maxReferences, candidateLimit, maxReferenceBytes,
		// then the upper bound of maxReferences.
		{`{"maxReferenceBytes":0,"candidateLimit":0,"maxReferences":0}`, Config{}, "maxReferences" + notPositive},
		{`{"maxReferenceBytes":0,"candidateLimit":0}`, Config{}, "candidateLimit" + notPositive},
		{`{"maxReferences":4,"maxReferenceBytes":0}`, Config{}, "maxReferenceBytes" + notPositive},
	}
	for _, tt := range tests {
		cfg, err := ConfigFromJSON(json.RawMessage(tt.in))
		if tt.err == "" {
			if err != nil || cfg != tt.want {
				t.Errorf("ConfigFromJSON(%s) = %+v, %v; want %+v", tt.in, cfg, err, tt.want)
			}
			continue
		}
		want := tt.err
		if want != tooMany {
			want = "session-reference: " + want
		}
		if err == nil || err.Error() != want || CodeOf(err) != CodeInvalidConfig {
			t.Errorf("ConfigFromJSON(%s) = %+v, %v; want %s", tt.in, cfg, err, want)
		}
	}
}

func TestConfigFromJSONNotAnObject(t *testing.T) {
	for in, want := range map[string]string{
		`[]`:     "session-reference: config must be a JSON object, not array",
		`3`:      "session-reference: config must be a JSON object, not number",
		`"x"`:    "session-reference: config must be a JSON object, not string",
		`{"a":}`: "session-reference: config is not valid JSON: invalid JSON at byte 5: unexpected character '}'",
	} {
		_, err := ConfigFromJSON(json.RawMessage(in))
		if err == nil || err.Error() != want || CodeOf(err) != CodeInvalidConfig {
			t.Errorf("ConfigFromJSON(%s) error = %v, want %q", in, err, want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		cfg Config
		err string
	}{
		{DefaultConfig(), ""},
		{Config{1, 1, 1}, ""},
		{Config{3, 1<<53 - 1, 1<<53 - 1}, ""},
		{Config{0, 50, 65536}, "session-reference: maxReferences must be a positive safe integer"},
		{Config{4, 50, 65536}, "session-reference: maxReferences must not exceed 3"},
		{Config{3, -1, 65536}, "session-reference: candidateLimit must be a positive safe integer"},
		{Config{3, 1 << 53, 65536}, "session-reference: candidateLimit must be a positive safe integer"},
		{Config{3, 50, 0}, "session-reference: maxReferenceBytes must be a positive safe integer"},
		{Config{9, 50, 0}, "session-reference: maxReferenceBytes must be a positive safe integer"},
	}
	for _, tt := range tests {
		err := tt.cfg.Validate()
		if tt.err == "" {
			if err != nil {
				t.Errorf("Validate(%+v) = %v", tt.cfg, err)
			}
			continue
		}
		if err == nil || err.Error() != tt.err || CodeOf(err) != CodeInvalidConfig {
			t.Errorf("Validate(%+v) = %v, want %q", tt.cfg, err, tt.err)
		}
	}
}
