// Package goldenfile locates and reads the shared golden cases
// (testdata/golden/<group>.json). It imports nothing from the project, so
// package reference's own (internal) tests can use it; package golden,
// which builds sources on top of reference, re-exports it.
package goldenfile

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Case is one golden case. Input and Output are the raw JSON of the case,
// byte for byte, so lone surrogate escapes such as "\ud800" survive for
// readers with JS semantics.
type Case struct {
	Name   string          `json:"name"`
	Input  json.RawMessage `json:"input"`
	Output json.RawMessage `json:"output"`
}

// RepoRoot returns the repository root: the nearest directory at or above
// the working directory that holds go.mod.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("golden: working directory: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("golden: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Dir returns the absolute path of testdata/golden.
func Dir(t testing.TB) string {
	t.Helper()
	return filepath.Join(RepoRoot(t), "testdata", "golden")
}

// Load reads testdata/golden/<group>.json, a non-empty array of cases.
func Load(t testing.TB, group string) []Case {
	t.Helper()
	path := filepath.Join(Dir(t), group+".json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden: %v", err)
	}
	var cases []Case
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatalf("golden: parsing %s: %v", path, err)
	}
	if len(cases) == 0 {
		t.Fatalf("golden: %s holds no cases", path)
	}
	for i, c := range cases {
		if c.Name == "" {
			t.Fatalf("golden: %s: case %d has no name", path, i)
		}
	}
	return cases
}
