package completion

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzFindQuery checks that FindQuery never panics and that an active
// query is exactly the text between an '@' and the cursor on one line.
func FuzzFindQuery(f *testing.F) {
	for _, s := range []string{"@", "see (@abc", "a@b", "@[x](dsh-session:InNyYyI) @q", "é🙂 @\u3000x", "\r\n@q\xff"} {
		f.Add(s, len(s))
	}
	f.Fuzz(func(t *testing.T, text string, cursor int) {
		q, ok := FindQuery(text, cursor)
		if !ok {
			return
		}
		if q.End != cursor || q.Start < 1 || q.Start > q.End || text[q.Start-1] != '@' || text[q.Start:q.End] != q.Text {
			t.Fatalf("FindQuery(%q, %d) = %+v", text, cursor, q)
		}
		if strings.ContainsAny(q.Text, "@[]()\n\r") || !utf8.ValidString(q.Text) {
			t.Fatalf("query %q has a forbidden character", q.Text)
		}
	})
}
