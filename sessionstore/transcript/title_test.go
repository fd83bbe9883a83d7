package transcript

import (
	"strings"
	"testing"
)

// TestTitleOf: a session/title event's title, cited seqs and source, each
// compacted, with the last of duplicate keys (JS JSON.parse) and keys
// written with escapes; each malformed field an error naming it.
func TestTitleOf(t *testing.T) {
	for _, c := range []struct {
		data, title, seqs, source, err string
	}{
		{data: `{"title":"Fix the loop","messageSeqs":[4],"source":{"kind":"fallback"}}`,
			title: `"Fix the loop"`, seqs: `[4]`, source: `{"kind":"fallback"}`},
		{data: ` { "title" : "a" , "messageSeqs" : [ 1 , 2 ] , "source" : { "kind" : "user" , "x" : 1 } } `,
			title: `"a"`, seqs: `[1,2]`, source: `{"kind":"user","x":1}`},
		{data: `{"title":"old","messageSeqs":"no","source":{"kind":"nope"},"title":"new","messageSeqs":[],"source":{"kind":"provider"}}`,
			title: `"new"`, seqs: `[]`, source: `{"kind":"provider"}`},
		{data: `{"\u0074itle":"escaped key","messageSeqs":[],"source":{"kin\u0064":"user"}}`,
			title: `"escaped key"`, seqs: `[]`, source: `{"kin\u0064":"user"}`},
		{data: `{"title":"k","messageSeqs":[],"source":{"kind":"user","kind":"fallback"}}`,
			title: `"k"`, seqs: `[]`, source: `{"kind":"user","kind":"fallback"}`},
		{data: `[]`, err: "event 7: session/title data is not an object"},
		{data: `{"title":"t","source":{"kind":"user"}}`, err: "event 7: session/title messageSeqs is not an array"},
		{data: `{"title":"t","messageSeqs":{},"source":{"kind":"user"}}`, err: "event 7: session/title messageSeqs is not an array"},
		{data: `{"title":"t","messageSeqs":[]}`, err: "event 7: session/title source is not an object"},
		{data: `{"title":"t","messageSeqs":[],"source":"user"}`, err: "event 7: session/title source is not an object"},
		{data: `{"title":"t","messageSeqs":[],"source":{}}`, err: "event 7: session/title source kind  is unknown"},
		{data: `{"title":"t","messageSeqs":[],"source":{"kind": "robot"}}`, err: `event 7: session/title source kind "robot" is unknown`},
		{data: `{"title":"t","messageSeqs":[],"source":{"kind":1}}`, err: "event 7: session/title source kind 1 is unknown"},
		{data: `{"messageSeqs":[],"source":{"kind":"user"}}`, err: "event 7: session/title title is not a string"},
		{data: `{"title":5,"messageSeqs":[],"source":{"kind":"user"}}`, err: "event 7: session/title title is not a string"},
		{data: `{"title":"` + strings.Repeat("x", MaxTitleBytes+1) + `","messageSeqs":[],"source":{"kind":"user"}}`, err: "title"},
		{data: `{"title":"` + strings.Repeat("x", maxTitleEventBytes) + `","messageSeqs":[],"source":{"kind":"user"}}`, err: "data"},
	} {
		got, err := TitleOf(&Event{Type: "session/title", Seq: 7, Time: 9, Data: []byte(c.data)})
		name := c.data[:min(len(c.data), 60)]
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want one with %q", name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if string(got.Title) != c.title || string(got.MessageSeqs) != c.seqs || string(got.Source) != c.source || got.EventSeq != 7 || got.UpdatedAt != 9 {
			t.Errorf("%s: got %s %s %s %d %d, want %s %s %s 7 9", name, got.Title, got.MessageSeqs, got.Source, got.EventSeq, got.UpdatedAt, c.title, c.seqs, c.source)
		}
	}
}

// BenchmarkTitleOf: the title a first pass folds per session.
func BenchmarkTitleOf(b *testing.B) {
	e := &Event{Type: "session/title", Seq: 6, Time: 1786421770304,
		Data: []byte(`{"title":"… … commit ` + "`go test ./...`" + ` customer_","messageSeqs":[4],"source":{"kind":"fallback"}}`)}
	for b.Loop() {
		if _, err := TitleOf(e); err != nil {
			b.Fatal(err)
		}
	}
}
