package reference

import "strings"

// lowerJS is a placeholder for core-A's LowerJS (JS toLocaleLowerCase) until
// it lands: Go lowercasing plus the one unconditional SpecialCasing mapping
// the candidate goldens exercise (U+0130 → "i̇").
func lowerJS(s string) string {
	return strings.ToLower(strings.ReplaceAll(s, "\u0130", "i\u0307"))
}
