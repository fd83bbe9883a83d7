package reference

import "testing"

func TestIsJSWhitespace(t *testing.T) {
	ws := "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
	for _, r := range ws {
		if !IsJSWhitespace(r) {
			t.Errorf("IsJSWhitespace(%U) = false", r)
		}
	}
	for _, r := range "a0_)\x00\x1c\x1f\x85\u180e\u200b\u200c\u2060\u00ad\ufffd" {
		if IsJSWhitespace(r) {
			t.Errorf("IsJSWhitespace(%U) = true", r)
		}
	}
}
