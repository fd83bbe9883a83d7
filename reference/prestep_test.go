package reference

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestPreStep(t *testing.T) {
	src := &fakeSource{sessions: []fakeSession{
		{id: "source", createdAt: 1, events: []SurfaceEvent{userEvent(0, "user", "", "source fact")}},
		{id: "other", cwd: ptr("/o"), createdAt: 1},
	}}
	target := Target{SessionID: ptr("target")}
	direct := json.RawMessage(`{"content":[{"type":"text","text":"compare @[Research](dsh-session:InNvdXJjZSI) now"},{"type":"reasoning","text":"dsh-session:InNvdXJjZSI kept"}],"source":{"kind":"user"},"role":"user","id":"m1"}`)
	ordinary := json.RawMessage(`{"content":[{"type":"text","text":"ordinary prompt"}],"source":{"kind":"user"},"role":"user","id":"m2"}`)
	plugin := json.RawMessage(`{"content":[{"type":"text","text":"@[bad](dsh-session:not-canonical)"}],"source":{"kind":"plugin","plugin":"test"},"role":"user","id":"m3"}`)

	s := newTestService(t, src, DefaultConfig())
	got, err := s.PreStep(context.Background(), target, StepDecision{Messages: []json.RawMessage{direct, ordinary, plugin}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Reject || len(got.Messages) != 4 {
		t.Fatalf("got %+v", got)
	}
	wantDirect := `{"content":[{"type":"text","text":"compare @Research now"},{"type":"reasoning","text":"dsh-session:InNvdXJjZSI kept"}],"source":{"kind":"user"},"role":"user","id":"m1"}`
	if m := got.Messages[0]; string(m.Message) != wantDirect || m.InputIndex != 0 || m.Unchanged {
		t.Errorf("direct: %+v\n%s", m, m.Message)
	}
	ctxMsg := got.Messages[1]
	if ctxMsg.InputIndex != -1 || !strings.Contains(string(ctxMsg.Message), `"references":[{"sessionId":"source","label":"Research"`) {
		t.Errorf("context: %s", ctxMsg.Message)
	}
	for i, want := range []json.RawMessage{ordinary, plugin} {
		if m := got.Messages[2+i]; !m.Unchanged || m.InputIndex != 1+i || string(m.Message) != string(want) {
			t.Errorf("message %d: %+v", 2+i, m)
		}
	}

	// A rejection passes through: nothing parsed, nothing read.
	rejected, err := s.PreStep(context.Background(), target, StepDecision{Reject: true, Messages: []json.RawMessage{plugin}})
	if err != nil || !rejected.Reject || src.reads() != 1 {
		t.Errorf("reject: %+v, %v, %d reads", rejected, err, src.reads())
	}

	failures := []struct {
		name, content string
		max           int64
		want          Code
	}{
		{"malformed mention", `[{"type":"text","text":"@[bad](dsh-session:not-canonical)"}]`, 3, CodeInvalidReference},
		{"self", `[{"type":"text","text":"dsh-session:InRhcmdldCI"}]`, 3, CodeSelfReference},
		{"too many across blocks", `[{"type":"text","text":"dsh-session:InNvdXJjZSI"},{"type":"text","text":"dsh-session:Im90aGVyIg"}]`, 1, CodeTooMany},
	}
	for _, f := range failures {
		cfg := DefaultConfig()
		cfg.MaxReferences = f.max
		s := newTestService(t, src, cfg)
		msg := json.RawMessage(`{"content":` + f.content + `,"source":{"kind":"user"},"role":"user","id":"x"}`)
		if _, err := s.PreStep(context.Background(), target, StepDecision{Messages: []json.RawMessage{msg}}); CodeOf(err) != f.want {
			t.Errorf("%s: err = %v, want %s", f.name, err, f.want)
		}
	}
}

func TestReplaceJSONMember(t *testing.T) {
	tests := []struct{ obj, name, value, want string }{
		{`{"a":1, "b" : [2], "c":3}`, "b", `"x"`, `{"a":1,"b":"x","c":3}`},
		{`{}`, "b", `1`, `{"b":1}`},
		{`{"a":1}`, "b", `1`, `{"a":1,"b":1}`},
	}
	for _, tt := range tests {
		if got := string(replaceJSONMember([]byte(tt.obj), tt.name, []byte(tt.value))); got != tt.want {
			t.Errorf("replace(%s, %s) = %s, want %s", tt.obj, tt.name, got, tt.want)
		}
	}
}
