package golden

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// maskEvent blanks what real dsh randomizes (times, message ids).
func maskEvent(t *testing.T, line []byte) any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(line, &v); err != nil {
		t.Fatalf("line %s: %v", line, err)
	}
	if _, ok := v["time"]; ok {
		v["time"] = 0
	}
	if d, ok := v["data"].(map[string]any); ok {
		if _, ok := d["id"]; ok && v["type"] == "user/message" {
			d["id"] = "<id>"
		}
		if m, ok := d["message"].(map[string]any); ok {
			m["id"] = "<id>"
		}
	}
	return v
}

// TestBuildLogMatchesRealDsh expands jsonl-root.write-input.json and
// compares every line with what real dsh wrote into jsonl-root.
func TestBuildLogMatchesRealDsh(t *testing.T) {
	dir := Dir(t)
	data, err := os.ReadFile(filepath.Join(dir, "jsonl-root.write-input.json"))
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		Sessions []Session `json:"sessions"`
	}
	if err := json.Unmarshal(data, &in); err != nil {
		t.Fatal(err)
	}
	if len(in.Sessions) == 0 {
		t.Fatal("no sessions in write input")
	}
	for _, s := range in.Sessions {
		t.Run(s.ID, func(t *testing.T) {
			got, err := BuildLog(s)
			if err != nil {
				t.Fatal(err)
			}
			path, err := sessionstore.SessionPath(filepath.Join(dir, "jsonl-root"), s.CWD, s.ID, sessionstore.Raw)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			gl := bytes.Split(bytes.TrimRight(got, "\n"), []byte("\n"))
			wl := bytes.Split(bytes.TrimRight(want, "\n"), []byte("\n"))
			if len(gl) != len(wl) {
				t.Fatalf("got %d lines, want %d", len(gl), len(wl))
			}
			for i := range gl {
				if g, w := maskEvent(t, gl[i]), maskEvent(t, wl[i]); !reflect.DeepEqual(g, w) {
					t.Errorf("line %d:\n got %s\nwant %s", i, gl[i], wl[i])
				}
			}
		})
	}
}

// TestNewSourceListsTargetAndAppliesOverrides checks the harness wiring.
func TestNewSourceListsTargetAndAppliesOverrides(t *testing.T) {
	input := json.RawMessage(`{"target":{"id":"target","cwd":"/w"},
		"sessions":[{"id":"a","createdAt":5,"events":[{"user":"hi"},{"title":"T"}]},{"id":"b","createdAt":7,"cwd":"/w"}],
		"readFailures":{"b":"disk exploded"},"titleFailures":["a"],"preAborted":true}`)
	env := NewSource(t, input)
	ctx := context.Background()
	hs, err := env.Source.ListSessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range hs {
		ids = append(ids, h.ID)
	}
	if want := []string{"b", "a", "target"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("listing %v, want %v", ids, want)
	}
	if _, err := env.Source.ReadSurface(ctx, "b"); err == nil || err.Error() != "disk exploded" {
		t.Errorf("ReadSurface(b) error %v, want disk exploded", err)
	}
	s, err := env.Source.ReadSurface(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Events) != 1 || *s.CapturedThroughSeq != 1 {
		t.Errorf("surface of a: %d events, captured through %v", len(s.Events), s.CapturedThroughSeq)
	}
	titles, err := env.Source.ReadTitles(ctx, []string{"a", "target", "a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(titles) != 2 || titles[0].Err == nil || titles[1].Err != nil || titles[1].Title != nil {
		t.Errorf("titles %+v", titles)
	}
	if env.Context().Err() == nil {
		t.Error("preAborted case context is not cancelled")
	}
}

func TestSameJSONAndErrorOutput(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		same bool
	}{
		{`{"a":1,"b":[true,null]}`, ` { "b" : [true, null], "a" : 1.0 } `, true},
		{`{"a":1}`, `{"a":2}`, false},
		{`[1,2]`, `[2,1]`, false},
		{`"x"`, `"x"`, true},
	} {
		if got := SameJSON(t, []byte(tt.a), []byte(tt.b)); got != tt.same {
			t.Errorf("SameJSON(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.same)
		}
	}
	for _, tt := range []struct {
		err  error
		want string
	}{
		{&reference.Error{Code: reference.CodeTooMany, Message: "too many"},
			`{"error":{"name":"SessionReferenceError","code":"SESSION_REFERENCE_TOO_MANY","message":"too many"}}`},
		{errors.New("boom"), `{"error":{"name":"Error","code":null,"message":"boom"}}`},
	} {
		got, err := json.Marshal(ErrorOutput(tt.err))
		if err != nil || !SameJSON(t, got, []byte(tt.want)) {
			t.Errorf("ErrorOutput(%v) = %s, want %s", tt.err, got, tt.want)
		}
	}
}
