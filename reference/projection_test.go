package reference

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

func rawEvent(seq int64, typ, data string) SurfaceEvent {
	return SurfaceEvent{Type: typ, Seq: seq, Data: json.RawMessage(data),
		Raw: json.RawMessage(fmt.Sprintf(`{"type":%q,"seq":%d,"time":0,"data":%s,"surfaceOp":"append"}`, typ, seq, data))}
}

func projected(items []projectedItem) string {
	parts := make([]string, len(items))
	for i, it := range items {
		cp := ""
		if it.checkpoint {
			cp = "*"
		}
		parts[i] = it.role + cp + ":" + it.text()
		if len(it.text()) != it.textLen {
			parts[i] += fmt.Sprintf("(textLen %d != %d)", it.textLen, len(it.text()))
		}
	}
	return strings.Join(parts, "|")
}

func TestProjectSurface(t *testing.T) {
	tests := []struct {
		name   string
		events []SurfaceEvent
		want   string
	}{
		{"spec scenario after the fold", []SurfaceEvent{
			userEvent(2, "plugin", "compact", "<compacted-summary>checkpoint</compacted-summary>"),
			userEvent(3, "user", "", "recent user"),
			rawEvent(4, eventUserMessage, `{"content":[{"type":"text","text":"workspace secret"}],"source":{"kind":"plugin","plugin":"workspace"},"role":"user","id":"p"}`),
			userEvent(5, "user", "", "human steer"),
			rawEvent(7, eventToolResult, `{"turn":2,"step":1,"message":{"role":"user","id":"t","source":{"kind":"tool","callId":"c"},"content":[{"type":"tool-result","toolCallId":"c","content":[{"type":"text","text":"tool output"}]}]}}`),
			rawEvent(8, eventAssistantMessage, `{"turn":2,"step":1,"message":{"role":"assistant","content":[{"type":"reasoning","text":"private reasoning"},{"type":"text","text":"visible answer"}],"source":{"kind":"model","provider":"p","model":"m"},"id":"a"}}`),
			rawEvent(10, eventUserMessage, `{"content":[{"type":"reasoning","text":"empty projected user"}],"source":{"kind":"user"},"role":"user","id":"u"}`),
			rawEvent(12, eventAssistantMessage, `{"turn":2,"step":2,"message":{"role":"assistant","content":[{"type":"reasoning","text":"x"}],"source":{"kind":"model","provider":"p","model":"m"},"id":"a"}}`),
		}, "user*:<compacted-summary>checkpoint</compacted-summary>|user:recent user|user:human steer|assistant:visible answer"},
		{"checkpoint source with extra fields, other sources dropped", []SurfaceEvent{
			rawEvent(0, eventUserMessage, `{"content":[{"type":"text","text":"cp"}],"source":{"form":"x","plugin":"compact","kind":"plugin","extra":1}}`),
			rawEvent(1, eventUserMessage, `{"content":[{"type":"text","text":"injected"}],"source":{"kind":"session-reference","form":"recall","version":1,"references":[]}}`),
			rawEvent(2, eventUserMessage, `{"content":[{"type":"text","text":"tool"}],"source":{"kind":"tool","callId":"c"}}`),
			rawEvent(3, eventUserMessage, `{"content":[{"type":"text","text":"goal"}],"source":{"kind":"goal"}}`),
			rawEvent(4, eventUserMessage, `{"content":[{"type":"text","text":"no source"}]}`),
			rawEvent(5, eventUserMessage, `{"content":[{"type":"text","text":"KIND"}],"source":{"Kind":"user"}}`),
		}, "user*:cp"},
		{"empty text blocks still separate", []SurfaceEvent{
			userEvent(0, "user", "", "", "after-empty"),
			userEvent(1, "user", "", "", ""),
			userEvent(2, "user", "", ""),
			rawEvent(3, eventUserMessage, `{"content":[{"type":"text","text":5},{"type":"text"},"str",null,{"type":"text","text":"a\u2028b\ud83d\ude42\ud800"}],"source":{"kind":"user"}}`),
		}, "user:\nafter-empty|user:\n|user:a\u2028b🙂\xed\xa0\x80"},
		{"type, kind and plugin are read as parsed strings", []SurfaceEvent{
			rawEvent(0, eventUserMessage, `{"content":[{"type":"\u0074ext","text":"escaped type"},{"type":"text ","text":"no"},{"type":["text"],"text":"no"},{"type":"Text","text":"no"}],"source":{"kind":"\u0075ser"}}`),
			rawEvent(1, eventUserMessage, `{"content":[{"type":"text","text":"escaped plugin"}],"source":{"kind":"plugin","plugin":"compac\u0074"}}`),
			rawEvent(2, eventUserMessage, `{"content":[{"type":"text","text":"kind not a string"}],"source":{"kind":["user"]}}`),
			rawEvent(3, eventUserMessage, `{"content":[{"type":"text","text":"plugin not a string"}],"source":{"kind":"plugin","plugin":123456789}}`),
			rawEvent(4, eventAssistantMessage, `{"message":{"content":[{"type":"te\u0078t","text":"escaped assistant"},{"type":1234,"text":"no"}]}}`),
		}, "user:escaped type|user*:escaped plugin|assistant:escaped assistant"},
		// Deliberate difference from dsh (CONTRACT.md): displayContent wins.
		{"legacy envelope displayContent", []SurfaceEvent{
			rawEvent(4, eventUserMessage, `{"content":[{"type":"text","text":"## Referenced sessions\n…"},{"type":"text","text":"\n\n## My request:\n"},{"type":"text","text":"Summarise @Fix login bug"}],"source":{"kind":"user"},"envelope":{"displayContent":[{"type":"text","text":"Summarise @Fix login bug"}],"prefixContexts":[]},"id":"legacy-message:s:4","role":"user"}`),
			rawEvent(5, eventUserMessage, `{"content":[{"type":"text","text":"no display"}],"source":{"kind":"user"},"envelope":{"prefixContexts":[]}}`),
			rawEvent(6, eventUserMessage, `{"content":[{"type":"text","text":"display not an array"}],"source":{"kind":"user"},"envelope":{"displayContent":"x"}}`),
			rawEvent(7, eventUserMessage, `{"content":[{"type":"text","text":"hidden"}],"source":{"kind":"user"},"envelope":{"displayContent":[]}}`),
		}, "user:Summarise @Fix login bug|user:no display|user:display not an array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items, err := projectSurface(&Surface{Events: tt.events})
			if err != nil {
				t.Fatal(err)
			}
			if got := projected(items); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestProjectSurfaceUnknownType(t *testing.T) {
	ev := SurfaceEvent{Type: "turn/start", Seq: 0, Data: json.RawMessage(`{}`),
		Raw: json.RawMessage(`{"type": "turn/start", "seq":0,"time":0.0,"surfaceOp":"append","data":{"a":"\u00e9<"}}`)}
	_, err := projectSurface(&Surface{Events: []SurfaceEvent{userEvent(0, "user", "", "x"), ev}})
	want := `unreachable variant in session-reference surface event: {"type":"turn/start","seq":0,"time":0,"surfaceOp":"append","data":{"a":"é<"}}`
	if err == nil || err.Error() != want || CodeOf(err) != "" {
		t.Fatalf("err = %v", err)
	}
}

func TestJSONReaderMalformed(t *testing.T) {
	for _, data := range []string{`{"content":[`, `{"source":{"kind":"user"},"content":[{"type":"text","text":"x}]}`, `[1]`, `{"a" 1}`, `{"a":1,}`} {
		_, _, err := projectUserMessage(nil, []byte(data), jsjson.StringLen)
		if err == nil {
			t.Errorf("%s: no error", data)
		}
	}
}

// TestJSONStringDecoding checks the projection's string reader against
// encoding/json on random strings written by two different encoders, and
// the string-end scan on runs of backslashes.
func TestJSONStringDecoding(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		s := randomText(rng, 40)
		std, _ := json.Marshal(s)
		for _, lit := range [][]byte{std, jsjson.AppendJSString(nil, s, false), jsjson.AppendJSString(nil, s, true)} {
			got, ok := jsjson.String(lit)
			if n, isString := jsjson.StringLen(lit); !isString || n != len(got) {
				t.Fatalf("jsjson.StringLen(%s) = %d, %v; want %d", lit, n, isString, len(got))
			}
			if !ok || got != s {
				t.Fatalf("jsjson.String(%s) = %q, %v; want %q", lit, got, ok, s)
			}
			wrapped := append(append([]byte(`{"k":`), lit...), `,"z":1}`...)
			if v := jsjson.ObjectField(wrapped, "z"); string(v) != "1" {
				t.Fatalf("field after %s: %q", lit, v)
			}
		}
	}
	for lit, want := range map[string]string{`"\ud800x"`: "\xed\xa0\x80x", `"\ud83d\ude42"`: "🙂", `"\udc00\ud800"`: "\xed\xb0\x80\xed\xa0\x80", "\"a\xffb\"": "a\uFFFDb"} {
		if n, _ := jsjson.StringLen([]byte(lit)); n != len(want) {
			t.Errorf("jsjson.StringLen(%s) = %d, want %d", lit, n, len(want))
		}
		if got, ok := jsjson.String([]byte(lit)); !ok || got != want {
			t.Errorf("jsjson.String(%s) = %q, want %q", lit, got, want)
		}
	}
	for _, bad := range []string{`"\x"`, `"\u12"`, `x`, `"abc`} {
		if _, ok := jsjson.StringLen([]byte(bad)); ok {
			t.Errorf("jsjson.StringLen(%s) accepted", bad)
		}
		if _, ok := jsjson.String([]byte(bad)); ok {
			t.Errorf("jsjson.String(%s) accepted", bad)
		}
	}
}
