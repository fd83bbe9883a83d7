package reference

import (
	"encoding/json"
	"math"
	"strings"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// maxReferencesLimit is dsh's hard limit on references per message
// (MAX_REFERENCES).
const maxReferencesLimit = 3

// Config holds the session-reference limits.
type Config struct {
	MaxReferences     int64 `json:"maxReferences"`
	CandidateLimit    int64 `json:"candidateLimit"`
	MaxReferenceBytes int64 `json:"maxReferenceBytes"`
}

// DefaultConfig returns dsh's defaults: 3, 50, 65536.
func DefaultConfig() Config { return Config{3, 50, 65536} }

// Validate checks c with dsh's rules and messages: each of maxReferences,
// candidateLimit and maxReferenceBytes, in that order, must be a positive
// safe integer (1 … 2^53−1); then maxReferences must not exceed 3. Errors
// are *Error with CodeInvalidConfig.
func (c Config) Validate() error {
	for _, f := range []struct {
		name  string
		value int64
	}{
		{"maxReferences", c.MaxReferences},
		{"candidateLimit", c.CandidateLimit},
		{"maxReferenceBytes", c.MaxReferenceBytes},
	} {
		if f.value <= 0 || f.value > maxSafeInteger {
			return notPositiveSafeInteger(f.name)
		}
	}
	if c.MaxReferences > maxReferencesLimit {
		return newError(CodeInvalidConfig, "session-reference: maxReferences must not exceed 3", nil)
	}
	return nil
}

func notPositiveSafeInteger(name string) *Error {
	return newError(CodeInvalidConfig, "session-reference: "+name+" must be a positive safe integer", nil)
}

// ConfigFromJSON reads a dsh config object (keys optional, defaults for
// absent keys) and validates each present JSON value the way dsh's
// constructor does (numbers only, safe integers, > 0, maxReferences <= 3).
//
// A value is read as JS reads a JSON number, so 3.0 and 3e0 are 3, while
// "2", 1.5, -1, 0, 9007199254740992 and 1e400 are refused with
// `session-reference: <name> must be a positive safe integer`. A null value
// counts as absent (dsh applies its defaults with ??), and so does an empty
// or null raw. Other keys are ignored, so a whole settings object can be
// passed. Anything but a JSON object is refused with CodeInvalidConfig.
func ConfigFromJSON(raw json.RawMessage) (Config, error) {
	cfg := DefaultConfig()
	text := strings.Trim(string(raw), " \t\r\n")
	if text == "" || text == "null" {
		return cfg, nil
	}
	v, err := jsjson.Parse(jsjson.RepairUTF8([]byte(text)))
	if err != nil {
		return Config{}, newError(CodeInvalidConfig, "session-reference: config is not valid JSON: "+err.Error(), err)
	}
	if v.Kind != jsjson.KindObject {
		return Config{}, newError(CodeInvalidConfig, "session-reference: config must be a JSON object, not "+v.Kind.String(), nil)
	}
	for _, f := range []struct {
		name string
		dst  *int64
	}{
		{"maxReferences", &cfg.MaxReferences},
		{"candidateLimit", &cfg.CandidateLimit},
		{"maxReferenceBytes", &cfg.MaxReferenceBytes},
	} {
		fv := v.Field(f.name)
		if fv == nil || fv.Kind == jsjson.KindNull {
			continue
		}
		if fv.Kind != jsjson.KindNumber || fv.Num != math.Trunc(fv.Num) || fv.Num <= 0 || fv.Num > maxSafeInteger {
			return Config{}, notPositiveSafeInteger(f.name)
		}
		*f.dst = int64(fv.Num)
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}
