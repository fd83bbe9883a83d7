package reference

import (
	"testing"

	"golang.org/x/text/cases"
)

// The delta table is what golang.org/x/text/cases lacks for Unicode 17: an
// x/text upgrade to newer Unicode tables makes part of it redundant or
// wrong, so the table must then be regenerated (reference/internal/unicodegen).
func TestLowerDeltaMatchesXText(t *testing.T) {
	if lowerDeltaTablesVersion != cases.UnicodeVersion {
		t.Fatalf("unicode17_lower.go (Unicode %s) was computed against x/text/cases Unicode %s, but x/text/cases is now Unicode %s: regenerate it with reference/internal/unicodegen",
			lowerDeltaVersion, lowerDeltaTablesVersion, cases.UnicodeVersion)
	}
}
