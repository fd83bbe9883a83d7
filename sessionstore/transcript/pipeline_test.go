package transcript_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript/transcripttest"
)

const testHeader = `{"type":"session","version":0,"id":"s","createdAt":1,"delegationDepth":0}`

// load runs the full pipeline over a logical log of the given lines.
func load(t *testing.T, lines ...string) (*transcripttest.Log, error) {
	t.Helper()
	scan, err := transcripttest.ScanRaw([]byte(testHeader + "\n" + strings.Join(lines, "\n") + "\n"))
	if err != nil {
		return nil, err
	}
	return transcripttest.LoadLog(scan, "s")
}

func ev(typ string, seq int, data string, extra ...string) string {
	s := `{"type":"` + typ + `","seq":` + strconv.Itoa(seq) + `,"time":10,"data":` + data
	for _, e := range extra {
		s += "," + e
	}
	return s + "}"
}

const userMsg = `{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"},"role":"user","id":"u"}`

func TestLegacyUpgrade(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		want    string // data after upgrade ("" when an error is expected)
		wantTyp string
	}{
		{"turn/start trigger dropped", ev("turn/start", 0, `{"turn":1,"trigger":{"kind":"message"}}`), `{"turn":1}`, "turn/start"},
		{"turn/start malformed trigger", ev("turn/start", 0, `{"turn":1,"trigger":{"kind":""}}`), "", ""},
		{"turn/start trigger with extra key", ev("turn/start", 0, `{"turn":1,"trigger":{"kind":"m"},"x":1}`), "", ""},
		{"turn/end completed", ev("turn/end", 0, `{"turn":1,"reason":{"kind":"completed"}}`), `{"turn":1,"reason":{"kind":"completed"}}`, "turn/end"},
		{"turn/end completed with extra", ev("turn/end", 0, `{"turn":1,"reason":{"kind":"completed","x":1}}`), "", ""},
		{"turn/end aborted legacy", ev("turn/end", 0, `{"turn":1,"reason":{"kind":"aborted"}}`), `{"turn":1,"reason":{"kind":"aborted","reason":{"kind":"legacy"}}}`, "turn/end"},
		{"turn/end disposed", ev("turn/end", 0, `{"turn":1,"reason":{"kind":"disposed"}}`), `{"turn":1,"reason":{"kind":"aborted","reason":{"kind":"disposed"}}}`, "turn/end"},
		{"turn/end error failure", ev("turn/end", 0, `{"turn":1,"reason":{"kind":"error","step":2,"failure":{"message":"m","code":"C"}}}`), `{"turn":1,"reason":{"kind":"error","error":{"message":"m","code":"C"}}}`, "turn/end"},
		{"turn/end error message", ev("turn/end", 0, `{"turn":1,"reason":{"kind":"error","step":0,"message":"boom"}}`), `{"turn":1,"reason":{"kind":"error","error":{"message":"boom","code":"UNKNOWN"}}}`, "turn/end"},
		{"turn/end error without step", ev("turn/end", 0, `{"turn":1,"reason":{"kind":"error","message":"boom"}}`), "", ""},
		{"turn/end turn 0", ev("turn/end", 0, `{"turn":0,"reason":{"kind":"completed"}}`), "", ""},
		{"steering {turn,message}", ev("steering/message", 0, `{"turn":1,"message":`+userMsg+`}`, `"surfaceOp":"append"`), userMsg, "user/message"},
		{"steering {turn,content,source}", ev("steering/message", 0, `{"turn":1,"content":[],"source":{"kind":"user"}}`, `"surfaceOp":"append"`),
			`{"content":[],"source":{"kind":"user"},"id":"legacy-message:s:0","role":"user"}`, "user/message"},
		{"steering with envelope", ev("steering/message", 0, `{"turn":1,"content":[],"source":{"kind":"user"},"envelope":{}}`, `"surfaceOp":"append"`), "", ""},
		{"pre-identity user keeps envelope", ev("user/message", 0, `{"content":[],"source":{"kind":"user"},"envelope":{"displayContent":[]}}`, `"surfaceOp":"append"`),
			`{"content":[],"source":{"kind":"user"},"envelope":{"displayContent":[]},"id":"legacy-message:s:0","role":"user"}`, "user/message"},
		{"pre-identity assistant", ev("assistant/message", 0, `{"turn":1,"step":1,"content":[],"provenance":{"provider":"p","model":"m"}}`, `"surfaceOp":"append"`),
			`{"turn":1,"step":1,"message":{"id":"legacy-message:s:0","role":"assistant","content":[],"source":{"provider":"p","model":"m","kind":"model"}}}`, "assistant/message"},
		{"retired mode/set", ev("mode/set", 0, `{}`), "", ""},
		{"retired request/header fallback", ev("request/header", 0, `{"reason":"fallback","header":{"config":{"provider":"p","model":"m"}}}`), "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, err := load(t, tt.line)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("accepted: %s", log.Events[0].Data)
				}
				if kindOf(err) != transcript.KindCorrupt {
					t.Errorf("error class %v, want corrupt (%v)", kindOf(err), err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := log.Events[0]; got.Type != tt.wantTyp || string(got.Data) != tt.want {
				t.Errorf("got %s %s\nwant %s %s", got.Type, got.Data, tt.wantTyp, tt.want)
			}
		})
	}
}

// TestLegacyToolResultReplaceInheritsID: a pre-identity tool/result that
// replaces another inherits the replaced message's id.
func TestLegacyToolResultReplaceInheritsID(t *testing.T) {
	log, err := load(t,
		ev("tool/result", 0, `{"turn":1,"step":1,"callId":"c","content":[{"type":"text","text":"long"}],"isError":false}`, `"surfaceOp":"append"`),
		ev("compaction/prune", 1, `{}`),
		ev("tool/result", 2, `{"turn":1,"step":1,"callId":"c","content":[{"type":"text","text":"short"}],"isError":false}`,
			`"sourceEventSeqs":[0]`, `"surfaceOp":{"op":"replace","start":0,"end":0}`))
	if err != nil {
		t.Fatal(err)
	}
	if id := transcript.MessageID(&log.Events[2]); id != "legacy-message:s:0" {
		t.Errorf("replacing result id %q", id)
	}
	if len(log.Surface) != 1 || log.Surface[0] != 2 {
		t.Errorf("surface %v", log.Surface)
	}
}

func TestFoldRules(t *testing.T) {
	user := func(seq int, extra ...string) string {
		return ev("user/message", seq, `{"content":[],"source":{"kind":"user"},"role":"user","id":"u`+strconv.Itoa(seq)+`"}`, extra...)
	}
	tool := func(seq int, text string, extra ...string) string {
		return ev("tool/result", seq, `{"turn":1,"step":1,"message":{"source":{"kind":"tool","callId":"c"},"content":[{"type":"tool-result","toolCallId":"c","content":[{"type":"text","text":"`+text+`"}],"isError":false}],"role":"user","id":"t"}}`, extra...)
	}
	app := `"surfaceOp":"append"`
	tests := []struct {
		name    string
		lines   []string
		surface string // "" when corrupt
	}{
		{"appends", []string{user(0, app), user(1, app)}, "[0 1]"},
		{"replace span", []string{user(0, app), user(1, app), user(2, app), user(3, `"sourceEventSeqs":[0,1]`, `"surfaceOp":{"op":"replace","start":0,"end":1}`)}, "[3 2]"},
		{"start > end after an earlier replace", []string{user(0, app), user(1, app), user(2, `"sourceEventSeqs":[1]`, `"surfaceOp":{"op":"replace","start":1,"end":1}`),
			user(3, app), user(4, `"sourceEventSeqs":[0,2,3]`, `"surfaceOp":{"op":"replace","start":2,"end":3}`)}, "[0 4]"},
		{"replace not citing a shadowed seq", []string{user(0, app), user(1, app), user(2, `"sourceEventSeqs":[0]`, `"surfaceOp":{"op":"replace","start":0,"end":1}`)}, ""},
		{"replace of a non-surface seq", []string{user(0, app), user(1, `"sourceEventSeqs":[0]`, `"surfaceOp":{"op":"replace","start":0,"end":5}`)}, ""},
		{"replace reversed positions", []string{user(0, app), user(1, app), user(2, `"sourceEventSeqs":[0,1]`, `"surfaceOp":{"op":"replace","start":1,"end":0}`)}, ""},
		{"surfaceOp extra key", []string{user(0, `"surfaceOp":{"op":"replace","start":0,"end":0,"x":1}`)}, ""},
		{"surfaceOp missing", []string{user(0)}, ""},
		{"surfaceOp on log-only", []string{ev("todo/write", 0, `{}`, app)}, ""},
		{"sourceEventSeqs on log-only", []string{ev("todo/write", 0, `{}`, `"sourceEventSeqs":[]`)}, ""},
		{"sourceEventSeqs not earlier", []string{user(0, app), user(1, `"sourceEventSeqs":[1]`, app)}, ""},
		{"sourceEventSeqs duplicate", []string{user(0, app), user(1, app), user(2, `"sourceEventSeqs":[0,0]`, app)}, ""},
		{"empty sourceEventSeqs on user", []string{user(0, `"sourceEventSeqs":[]`, app)}, ""},
		{"tool result replace changing only content", []string{tool(0, "long", app), tool(1, "short", `"sourceEventSeqs":[0]`, `"surfaceOp":{"op":"replace","start":0,"end":0}`)}, "[1]"},
		{"tool result replace changing more", []string{tool(0, "long", app), strings.Replace(tool(1, "short", `"sourceEventSeqs":[0]`, `"surfaceOp":{"op":"replace","start":0,"end":0}`), `"step":1`, `"step":2`, 1)}, ""},
		{"tool result replacing a user message", []string{user(0, app), tool(1, "x", `"sourceEventSeqs":[0]`, `"surfaceOp":{"op":"replace","start":0,"end":0}`)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, err := load(t, tt.lines...)
			if tt.surface == "" {
				if err == nil {
					t.Fatalf("accepted, surface %v", log.Surface)
				}
				if kindOf(err) != transcript.KindCorrupt {
					t.Errorf("class %v (%v)", kindOf(err), err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(log.Surface); got != tt.surface {
				t.Errorf("surface %s, want %s", got, tt.surface)
			}
		})
	}
}

// kindOf is the error class of a log error (0 for another error).
func kindOf(err error) transcript.Kind {
	var e *transcript.Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}
