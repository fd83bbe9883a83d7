package reference

import "testing"

func TestMessagesIsTheSnapshotProjection(t *testing.T) {
	ev := func(typ, data string) SurfaceEvent { return SurfaceEvent{Type: typ, Data: []byte(data)} }
	tests := []struct {
		name   string
		events []SurfaceEvent
		want   []Message
	}{
		{"legacy displayContent replaces content", []SurfaceEvent{
			ev("user/message", `{"content":[{"type":"text","text":"baked snapshot\nquestion"}],"envelope":{"displayContent":[{"type":"text","text":"question"}]},"source":{"kind":"user"}}`),
		}, []Message{{Role: "user", Text: "question"}}},
		{"empty displayContent drops the message", []SurfaceEvent{
			ev("user/message", `{"content":[{"type":"text","text":"x"}],"envelope":{"displayContent":[]},"source":{"kind":"user"}}`),
		}, nil},
		{"assistant text comes from message.content only", []SurfaceEvent{
			ev("assistant/message", `{"content":[{"type":"text","text":"top"}]}`),
			ev("assistant/message", `{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}`),
		}, []Message{{Role: "assistant", Text: "a\nb"}}},
		{"checkpoints kept, tool results dropped", []SurfaceEvent{
			ev("user/message", `{"content":[{"type":"text","text":"sum"}],"source":{"kind":"plugin","plugin":"compact"}}`),
			ev("tool/result", `{"content":[{"type":"text","text":"out"}]}`),
		}, []Message{{Role: "user", Text: "sum", Checkpoint: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			surf := &Surface{Events: tt.events}
			got, err := Messages(surf)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("Messages = %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("message %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
			r, err := Retain(surf, "t", 1<<20)
			if err != nil {
				t.Fatalf("Retain: %v", err)
			}
			if r.Stats.OriginalMessages != len(got) {
				t.Errorf("retention counts %d messages, Messages %d", r.Stats.OriginalMessages, len(got))
			}
		})
	}
	if _, err := Messages(&Surface{Events: []SurfaceEvent{ev("other/event", `{}`)}}); err == nil {
		t.Error("an unknown event type projected without error")
	}
}
