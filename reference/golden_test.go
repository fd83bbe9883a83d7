package reference_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/dsh-lsp/dsh-lsp/internal/golden"
	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/memstore"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/storetest"
)

// These tests run the dsh golden groups candidates, prepare, prestep and
// retain through the core, comparing every output value exactly (message
// ids masked as "<uuid>", errors by name, code and message, byte counts
// where the case gives them).

func decode(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return v
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// maskID replaces a message's "id" with "<uuid>" after checking it is a
// UUID v4.
func maskID(t *testing.T, msg map[string]any) {
	t.Helper()
	id, _ := msg["id"].(string)
	if u, err := uuid.Parse(id); err != nil || u.Version() != 4 || u.String() != id {
		t.Errorf("message id %q is not a UUID v4", id)
	}
	msg["id"] = "<uuid>"
}

func TestGoldenCandidates(t *testing.T) {
	for _, c := range golden.Load(t, "candidates") {
		t.Run(c.Name, func(t *testing.T) {
			env := golden.NewSource(t, c.Input)
			var in struct {
				Query  string `json:"query"`
				Limit  *int64 `json:"limit"`
				Remote bool   `json:"remote"`
			}
			if err := json.Unmarshal(c.Input, &in); err != nil {
				t.Fatal(err)
			}
			svc := env.Service(t)
			var list any
			var err error
			if in.Remote {
				list, err = svc.RemoteCandidates(env.Context(), env.Target, in.Query)
			} else {
				limit := svc.Config().CandidateLimit
				if in.Limit != nil {
					limit = *in.Limit
				}
				list, err = svc.ListCandidates(env.Context(), env.Target, in.Query, limit)
			}
			var got any = map[string]any{"candidates": list}
			if err != nil {
				got = golden.ErrorOutput(err)
			}
			if b := mustMarshal(t, got); !golden.SameJSON(t, b, c.Output) {
				t.Errorf("got  %s\nwant %s", b, c.Output)
			}
		})
	}
}

// prepareOutput is the golden prepare output.
type prepareOutput struct {
	Parsed            *reference.ParseResult `json:"parsed,omitempty"`
	Content           json.RawMessage        `json:"content"`
	AdditionalContext any                    `json:"additionalContext,omitempty"`
	PromptData        []json.RawMessage      `json:"promptData,omitempty"`
	ReferenceBytes    []int                  `json:"referenceBytes,omitempty"`
	PromptBytes       int                    `json:"promptBytes,omitempty"`
}

// contentBlocks is dsh's content: a string becomes one text block.
func contentBlocks(t *testing.T, raw json.RawMessage) json.RawMessage {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return mustMarshal(t, []map[string]string{{"type": "text", "text": s}})
	}
	return raw
}

// contextMessageValue is the context message as a JSON value with its id
// checked and masked; the bytes are also checked for dsh's key order.
func contextMessageValue(t *testing.T, m *reference.ContextMessage) map[string]any {
	t.Helper()
	b := m.AppendJSON(nil)
	if !strings.HasPrefix(string(b), `{"source":{"kind":"session-reference","form":"recall","version":1,"references":[`) ||
		!strings.Contains(string(b), `]},"content":[{"type":"text","text":"## Referenced sessions\n`) ||
		!strings.HasSuffix(string(b), `"}],"role":"user","id":"`+m.ID+`"}`) {
		t.Errorf("context message key order: %s", b)
	}
	v := decode(t, b).(map[string]any)
	maskID(t, v)
	return v
}

func TestGoldenPrepare(t *testing.T) {
	for _, c := range golden.Load(t, "prepare") {
		t.Run(c.Name, func(t *testing.T) {
			env := golden.NewSource(t, c.Input)
			var in struct {
				Content     json.RawMessage   `json:"content"`
				References  []json.RawMessage `json:"references"`
				MentionText *string           `json:"mentionText"`
			}
			if err := json.Unmarshal(c.Input, &in); err != nil {
				t.Fatal(err)
			}
			var wantBytes struct {
				PromptBytes int `json:"promptBytes"`
			}
			if err := json.Unmarshal(c.Output, &wantBytes); err != nil {
				t.Fatal(err)
			}
			svc := env.Service(t)
			var out prepareOutput
			refs := in.References
			if in.MentionText != nil {
				parsed, err := reference.ParseText(*in.MentionText)
				if err != nil {
					compare(t, golden.ErrorOutput(err), c.Output)
					return
				}
				out.Parsed = &parsed
				in.Content = mustMarshal(t, parsed.Text)
				refs = nil
				for _, r := range parsed.References {
					refs = append(refs, mustMarshal(t, r))
				}
			}
			out.Content = contentBlocks(t, in.Content)
			prepared, err := svc.PrepareJSON(env.Context(), env.Target, refs)
			if err != nil {
				compare(t, golden.ErrorOutput(err), c.Output)
				return
			}
			if in.MentionText != nil {
				checkPrepareText(t, env, *in.MentionText, out.Parsed.Text, prepared.ContextMessage)
			}
			if m := prepared.ContextMessage; m != nil {
				out.AdditionalContext = contextMessageValue(t, m)
				for _, d := range prepared.Data {
					out.PromptData = append(out.PromptData, d)
					out.ReferenceBytes = append(out.ReferenceBytes, len(d))
				}
				out.PromptBytes = len(m.Text)
				if wantBytes.PromptBytes != 0 && len(m.Text) != wantBytes.PromptBytes {
					t.Errorf("prompt is %d bytes, want %d", len(m.Text), wantBytes.PromptBytes)
				}
			}
			compare(t, out, c.Output)
		})
	}
}

// checkPrepareText checks that Service.PrepareText (parse and prepare in
// one call) gives the parsed content and the same context message as
// ParseText followed by PrepareJSON.
func checkPrepareText(t *testing.T, env *golden.Env, text, wantContent string, want *reference.ContextMessage) {
	t.Helper()
	p, err := env.Service(t).PrepareText(env.Context(), env.Target, text)
	if err != nil {
		t.Fatalf("PrepareText: %v", err)
	}
	if p.Content != wantContent {
		t.Errorf("PrepareText content %q, want %q", p.Content, wantContent)
	}
	if (p.ContextMessage == nil) != (want == nil) {
		t.Fatalf("PrepareText context message %v, want %v", p.ContextMessage, want)
	}
	if want != nil && !reflect.DeepEqual(contextMessageValue(t, p.ContextMessage), contextMessageValue(t, want)) {
		t.Errorf("PrepareText context message\n got %s\nwant %s", p.ContextMessage.AppendJSON(nil), want.AppendJSON(nil))
	}
}

func compare(t *testing.T, got any, want json.RawMessage) {
	t.Helper()
	if b := mustMarshal(t, got); !golden.SameJSON(t, b, want) {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

// expandStepMessage turns a golden prestep message shorthand ({text} or
// {content}, optional source) into a message object with a fresh id.
func expandStepMessage(t *testing.T, raw json.RawMessage) json.RawMessage {
	var m struct {
		Text    *string         `json:"text"`
		Content json.RawMessage `json:"content"`
		Source  json.RawMessage `json:"source"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	content := m.Content
	if m.Text != nil {
		content = mustMarshal(t, []map[string]string{{"type": "text", "text": *m.Text}})
	}
	source := m.Source
	if source == nil {
		source = json.RawMessage(`{"kind":"user"}`)
	}
	return json.RawMessage(fmt.Sprintf(`{"content":%s,"source":%s,"role":"user","id":%q}`, content, source, uuid.NewString()))
}

func TestGoldenPrestep(t *testing.T) {
	for _, c := range golden.Load(t, "prestep") {
		t.Run(c.Name, func(t *testing.T) {
			env := golden.NewSource(t, c.Input)
			var in struct {
				Reject   bool              `json:"reject"`
				Messages []json.RawMessage `json:"messages"`
			}
			if err := json.Unmarshal(c.Input, &in); err != nil {
				t.Fatal(err)
			}
			decision := reference.StepDecision{Reject: in.Reject}
			for _, m := range in.Messages {
				decision.Messages = append(decision.Messages, expandStepMessage(t, m))
			}
			res, err := env.Service(t).PreStep(env.Context(), env.Target, decision)
			if err != nil {
				compare(t, golden.ErrorOutput(err), c.Output)
				return
			}
			if res.Reject {
				compare(t, map[string]any{"decision": map[string]any{"kind": "reject"}}, c.Output)
				return
			}
			msgs := []any{}
			for _, m := range res.Messages {
				v := decode(t, m.Message).(map[string]any)
				maskID(t, v)
				v["sameObject"] = m.Unchanged
				v["inputIndex"] = nil
				if m.InputIndex >= 0 {
					v["inputIndex"] = m.InputIndex
					if m.Unchanged && string(m.Message) != string(decision.Messages[m.InputIndex]) {
						t.Errorf("message %d is marked unchanged but differs", m.InputIndex)
					}
				}
				msgs = append(msgs, v)
			}
			compare(t, map[string]any{"decision": map[string]any{"kind": "enter", "messages": msgs}}, c.Output)
		})
	}
}

func TestGoldenRetain(t *testing.T) {
	for _, c := range golden.Load(t, "retain") {
		t.Run(c.Name, func(t *testing.T) {
			var in struct {
				Snapshot json.RawMessage `json:"snapshot"`
				Label    string          `json:"label"`
				MaxBytes int64           `json:"maxBytes"`
			}
			if err := json.Unmarshal(c.Input, &in); err != nil {
				t.Fatal(err)
			}
			surface, err := memstore.ParseSurface(in.Snapshot)
			if err != nil {
				t.Fatal(err)
			}
			r, err := reference.Retain(surface, in.Label, in.MaxBytes)
			switch {
			case reference.CodeOf(err) == reference.CodeBudgetExceeded:
				compare(t, map[string]any{"result": nil}, c.Output)
			case err != nil:
				compare(t, golden.ErrorOutput(err), c.Output)
			default:
				data := r.Data.AppendJSON(nil)
				if r.Data.Size() != int64(len(data)) {
					t.Errorf("Size() = %d, serialized %d bytes", r.Data.Size(), len(data))
				}
				compare(t, map[string]any{"result": map[string]any{"data": json.RawMessage(data), "stats": r.Stats}, "bytes": len(data)}, c.Output)
			}
		})
	}
}

// TestFixtureStoreReferences retains every session of the real-format
// fixture store (raw and zstd copies) at the budgets of
// store-*.expected.json and compares the
// data, stats, byte count and full prompt text exactly. Session D (legacy
// baked prefix context) is expected to differ by design: dsh-lsp projects
// envelope.displayContent (CONTRACT.md), so its first item is the user's
// own text instead of the embedded older snapshot.
func TestFixtureStoreReferences(t *testing.T) {
	for _, store := range []struct {
		name string
		want int
	}{{"store-raw", 21}, {"store-zstd", 6}} {
		t.Run(store.name, func(t *testing.T) { testFixtureStoreReferences(t, store.name, store.want) })
	}
}

func testFixtureStoreReferences(t *testing.T, name string, wantChecked int) {
	root := filepath.Join(golden.RepoRoot(t), "testdata", "fixtures")
	raw, err := os.ReadFile(filepath.Join(root, "expected", name+".expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var expected struct {
		Sessions []struct {
			Header struct {
				ID string `json:"id"`
			} `json:"header"`
			Label      string `json:"label"`
			References []struct {
				MaxReferenceBytes int64           `json:"maxReferenceBytes"`
				Data              json.RawMessage `json:"data"`
				Stats             json.RawMessage `json:"stats"`
				DataBytes         int             `json:"dataBytes"`
				Prompt            string          `json:"prompt"`
			} `json:"references"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal(raw, &expected); err != nil {
		t.Fatal(err)
	}
	store, err := storetest.OpenSynced(filepath.Join(root, name), 0)
	if err != nil {
		t.Fatal(err)
	}
	const legacyD = "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0004"
	checked := 0
	for _, s := range expected.Sessions {
		for _, ref := range s.References {
			t.Run(fmt.Sprintf("%s/%d", s.Header.ID, ref.MaxReferenceBytes), func(t *testing.T) {
				cfg := reference.DefaultConfig()
				cfg.MaxReferenceBytes = ref.MaxReferenceBytes
				svc, err := reference.NewService(store, cfg)
				if err != nil {
					t.Fatal(err)
				}
				label := s.Label
				prepared, err := svc.Prepare(context.Background(), reference.Target{}, []reference.Reference{{SessionID: s.Header.ID, Label: &label}})
				if err != nil {
					t.Fatal(err)
				}
				data := prepared.Data[0]
				if s.Header.ID == legacyD {
					if strings.Contains(string(data), "Referenced sessions") || len(data) > int(ref.MaxReferenceBytes) {
						t.Errorf("legacy displayContent projection: %s", data)
					}
					if ref.MaxReferenceBytes == 65536 {
						// Unbudgeted: dsh's data with the first (baked) item's
						// text replaced by its displayContent text.
						var want map[string]any
						if err := json.Unmarshal(ref.Data, &want); err != nil {
							t.Fatal(err)
						}
						first := want["conversation"].([]any)[0].(map[string]any)
						if !strings.HasPrefix(first["text"].(string), "## Referenced sessions") {
							t.Fatalf("fixture D changed: %v", first)
						}
						first["text"] = "Summarise the login fix from @Fix login bug"
						if wantData := mustMarshal(t, want); !golden.SameJSON(t, data, wantData) {
							t.Errorf("legacy data\n got %s\nwant %s", data, wantData)
						}
					}
					checked++
					return
				}
				if string(data) != string(mustMarshalCompact(t, ref.Data)) || len(data) != ref.DataBytes {
					t.Errorf("data (%d bytes)\n got %s\nwant %s (%d bytes)", len(data), data, ref.Data, ref.DataBytes)
				}
				stats := prepared.ContextMessage.Source.References[0]
				if !golden.SameJSON(t, mustMarshal(t, reference.RetentionStats{
					Compacted: stats.Compacted, OriginalMessages: stats.OriginalMessages, RetainedMessages: stats.RetainedMessages,
					OmittedMessages: stats.OmittedMessages, OmittedBytes: stats.OmittedBytes, Truncated: stats.Truncated,
				}), ref.Stats) {
					t.Errorf("stats %+v, want %s", stats, ref.Stats)
				}
				if prepared.ContextMessage.Text != ref.Prompt {
					t.Errorf("prompt\n got %q\nwant %q", prepared.ContextMessage.Text, ref.Prompt)
				}
				retained, _, err := svc.RetainOne(context.Background(), s.Header.ID, label)
				if err != nil || string(retained) != string(data) {
					t.Errorf("RetainOne = %s, %v", retained, err)
				}
				checked++
			})
		}
	}
	if checked != wantChecked {
		t.Errorf("checked %d references, want %d", checked, wantChecked)
	}
}

// mustMarshalCompact re-serializes a golden data object the tag-safe way
// (JSON.parse, then JSON.stringify with every "<" as \u003c), so it can be
// compared byte for byte.
func mustMarshalCompact(t *testing.T, raw json.RawMessage) []byte {
	t.Helper()
	v, err := jsjson.Parse(jsjson.RepairUTF8(raw))
	if err != nil {
		t.Fatal(err)
	}
	return jsjson.AppendValue(nil, v, true)
}
