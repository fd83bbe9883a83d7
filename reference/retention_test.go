package reference

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// snapshotJSON is a raw readSurface snapshot as the goldens carry it.
type snapshotJSON struct {
	Session            json.RawMessage   `json:"session"`
	CapturedThroughSeq *int64            `json:"capturedThroughSeq"`
	Events             []json.RawMessage `json:"events"`
}

// surfaceFromSnapshot builds a Surface from a raw readSurface snapshot.
func surfaceFromSnapshot(t testing.TB, raw json.RawMessage) *Surface {
	t.Helper()
	var snap snapshotJSON
	if err := json.Unmarshal(raw, &snap); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	var header struct {
		ID        string  `json:"id"`
		CWD       *string `json:"cwd"`
		CreatedAt int64   `json:"createdAt"`
	}
	if err := json.Unmarshal(snap.Session, &header); err != nil {
		t.Fatalf("snapshot session: %v", err)
	}
	s := &Surface{
		Session:            snap.Session,
		Header:             SessionHeader{ID: header.ID, CWD: header.CWD, CreatedAt: header.CreatedAt, Raw: snap.Session},
		CapturedThroughSeq: snap.CapturedThroughSeq,
	}
	for _, ev := range snap.Events {
		var e struct {
			Type string          `json:"type"`
			Seq  int64           `json:"seq"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(ev, &e); err != nil {
			t.Fatalf("snapshot event: %v", err)
		}
		s.Events = append(s.Events, SurfaceEvent{Type: e.Type, Seq: e.Seq, Data: e.Data, Raw: ev})
	}
	return s
}

func readTestdata(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", path))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// jsonEqual compares two JSON texts as values.
func jsonEqual(t testing.TB, got, want []byte) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("want is not JSON: %v\n%s", err, want)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	return bytes.Equal(gb, wb)
}

// TestRetentionVectors runs the retention runs and TextRetainer cases of
// fixtures/expected/retention-and-path-vectors.json byte for byte.
func TestRetentionVectors(t *testing.T) {
	var vectors struct {
		TextRetainer []struct {
			Input        string
			HeadBytes    int64
			TailBytes    int64
			Text         string
			Truncated    bool
			OmittedBytes struct {
				Kind  string
				Count int64
			}
		}
		Retention []struct {
			Snapshot          string
			MaxReferenceBytes int64
			Serialized        string
			SerializedBytes   int
			Stats             RetentionStats
			Error             string
		}
		RetentionSnapshots map[string]json.RawMessage
	}
	if err := json.Unmarshal(readTestdata(t, "fixtures/expected/retention-and-path-vectors.json"), &vectors); err != nil {
		t.Fatal(err)
	}
	for i, v := range vectors.TextRetainer {
		head, tail, omitted := headTail([]byte(v.Input), v.HeadBytes, v.TailBytes)
		text := string(stripBOM(head)) + string(stripBOM(tail))
		wantOmitted := v.OmittedBytes.Count // 0 for kind "none"
		if text != v.Text || omitted != wantOmitted || (omitted > 0) != v.Truncated {
			t.Errorf("textRetainer[%d] %q head %d tail %d: got %q omitted %d, want %q omitted %d", i, v.Input, v.HeadBytes, v.TailBytes, text, omitted, v.Text, wantOmitted)
		}
	}
	// The vectors use each snapshot's name as the label, except "tags".
	labels := map[string]string{"cjk": "cjk", "emoji": "emoji", "empty": "empty", "tags": "label <x>"}
	if len(vectors.Retention) == 0 {
		t.Fatal("no retention vectors")
	}
	for _, v := range vectors.Retention {
		t.Run(fmt.Sprintf("%s-%d", v.Snapshot, v.MaxReferenceBytes), func(t *testing.T) {
			surface := surfaceFromSnapshot(t, vectors.RetentionSnapshots[v.Snapshot])
			got, err := Retain(surface, labels[v.Snapshot], v.MaxReferenceBytes)
			if v.Error != "" {
				if CodeOf(err) != Code(v.Error) {
					t.Fatalf("got %v, want %s", err, v.Error)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			data := got.Data.AppendJSON(nil)
			if string(data) != v.Serialized || len(data) != v.SerializedBytes {
				t.Errorf("serialized\n got %s\nwant %s", data, v.Serialized)
			}
			if got.Stats != v.Stats {
				t.Errorf("stats = %+v, want %+v", got.Stats, v.Stats)
			}
		})
	}
}

// userEvent and assistantEvent build surface events in the real format.
func userEvent(seq int64, kind, plugin string, texts ...string) SurfaceEvent {
	source := fmt.Sprintf(`{"kind":%q}`, kind)
	if plugin != "" {
		source = fmt.Sprintf(`{"kind":%q,"plugin":%q,"compactionId":"c"}`, kind, plugin)
	}
	data := fmt.Sprintf(`{"content":%s,"source":%s,"role":"user","id":"u%d"}`, textBlocksJSON(texts), source, seq)
	return SurfaceEvent{Type: eventUserMessage, Seq: seq, Data: json.RawMessage(data)}
}

func assistantEvent(seq int64, texts ...string) SurfaceEvent {
	data := fmt.Sprintf(`{"turn":1,"step":1,"message":{"role":"assistant","content":%s,"source":{"kind":"model","provider":"p","model":"m"},"id":"a%d"}}`, textBlocksJSON(texts), seq)
	return SurfaceEvent{Type: eventAssistantMessage, Seq: seq, Data: json.RawMessage(data)}
}

func textBlocksJSON(texts []string) string {
	blocks := make([]string, len(texts))
	for i, text := range texts {
		q := jsjson.AppendJSString(nil, text, true)
		blocks[i] = `{"type":"text","text":` + string(q) + `}`
	}
	return "[" + strings.Join(blocks, ",") + "]"
}

// randomText mixes ASCII, JSON-escaped characters, "<", multibyte and
// astral characters, and BOMs, so escaped and raw byte counts diverge.
func randomText(rng *rand.Rand, maxLen int) string {
	pieces := []string{"a", "b", " ", "<", "\"", "\\", "\n", "\t", "\x01", "é", "界", "🙂", "\uFEFF", "\u2028", ">", "&"}
	n := rng.IntN(maxLen + 1)
	var sb strings.Builder
	for range n {
		if rng.IntN(3) == 0 {
			sb.WriteString(pieces[rng.IntN(len(pieces))])
		} else {
			sb.WriteByte(byte('a' + rng.IntN(26)))
		}
	}
	return sb.String()
}

// randomSurface is a surface of random user, checkpoint and assistant items.
// Some texts hold lone surrogates (written as \udxxx escapes in the event
// JSON), whose WTF-8 form is 3 bytes like the U+FFFD TextEncoder counts.
func randomSurface(rng *rand.Rand, items, maxText int) *Surface {
	cwd := "/w<" + randomText(rng, 5)
	seq := int64(rng.IntN(1000))
	s := &Surface{Header: SessionHeader{ID: "s" + randomText(rng, 8), CWD: &cwd}, CapturedThroughSeq: &seq}
	if rng.IntN(2) == 0 {
		s.Header.CWD, s.CapturedThroughSeq = nil, nil
	}
	text := func() string {
		t := randomText(rng, maxText)
		if rng.IntN(4) == 0 {
			i := rng.IntN(len(t) + 1)
			t = t[:i] + "\xed\xa0\x80" + t[i:] // lone U+D800 (may split a multibyte character: then U+FFFD)
		}
		return t
	}
	for i := range items {
		switch rng.IntN(5) {
		case 0:
			s.Events = append(s.Events, userEvent(int64(i), "plugin", "compact", text()))
		case 1, 2:
			s.Events = append(s.Events, userEvent(int64(i), "user", "", text()))
		default:
			s.Events = append(s.Events, assistantEvent(int64(i), text(), randomText(rng, 3)))
		}
	}
	return s
}

// TestRetentionAccountMatchesSerialization checks the incremental byte
// account against a full serialization after the drop phase and after
// every truncation. (The drop decisions themselves are checked against
// dsh's literal per-drop loop by TestRetainMatchesNaive.)
func TestRetentionAccountMatchesSerialization(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	steps := 0
	for iter := range 400 {
		surface := randomSurface(rng, 1+rng.IntN(25), 1+rng.IntN(120))
		items, err := projectSurface(surface)
		if err != nil {
			t.Fatal(err)
		}
		label := randomText(rng, 6)
		budget := int64(60 + rng.IntN(900))
		r := newRetainer(surface, label, items, budget)
		check := func(when string) {
			d := r.data()
			if n := int64(len(d.AppendJSON(nil))); n != r.size {
				t.Fatalf("iteration %d %s: account %d, serialized %d", iter, when, r.size, n)
			}
		}
		r.step = func() { steps++; check("after a step") }
		err = r.run()
		if err != nil && CodeOf(err) != CodeBudgetExceeded {
			t.Fatal(err)
		}
		if err == nil && r.size > budget {
			t.Fatalf("iteration %d: size %d over budget %d", iter, r.size, budget)
		}
	}
	if steps < 600 {
		t.Fatalf("only %d steps exercised", steps)
	}
}

// naiveRetain is dsh's retainReferencedSession transcribed literally: it
// re-serializes the whole data object at every step (quadratic), and is the
// reference the incremental implementation must match byte for byte.
func naiveRetain(surface *Surface, label string, budget int64) ([]byte, RetentionStats, error) {
	items, err := projectSurface(surface)
	if err != nil {
		return nil, RetentionStats{}, err
	}
	type entry struct {
		item    projectedItem
		text    string
		omitted int64
	}
	retained := make([]entry, len(items))
	for i, it := range items {
		retained[i] = entry{item: it, text: it.text()}
	}
	serialize := func() []byte {
		d := DataObject{SessionID: surface.Header.ID, Label: label, CWD: surface.Header.CWD, CapturedThroughSeq: surface.CapturedThroughSeq}
		for _, e := range retained {
			d.Conversation = append(d.Conversation, ConversationItem{Role: e.item.role, Text: e.text})
		}
		return d.AppendJSON(nil)
	}
	var omittedMessages int
	var dropped int64
	for int64(len(serialize())) > budget {
		index := -1
		for i, e := range retained {
			if !e.item.checkpoint && i != len(retained)-1 {
				index = i
				break
			}
		}
		if index < 0 {
			break
		}
		omittedMessages++
		dropped += int64(len(retained[index].item.text()))
		retained = append(retained[:index], retained[index+1:]...)
	}
	retainedCount := len(retained)
	for {
		size := int64(len(serialize()))
		if size <= budget {
			break
		}
		index := -1
		for i, e := range retained {
			if len(e.text) > 0 && (index < 0 || len(e.text) > len(retained[index].text)) {
				index = i
			}
		}
		if index < 0 {
			return nil, RetentionStats{}, errBudgetExceeded()
		}
		e := &retained[index]
		target := max(0, int64(len(e.text))-(size-budget))
		text, omitted := truncateWithNotice(e.item.text(), target)
		if text == e.text {
			return nil, RetentionStats{}, errBudgetExceeded()
		}
		e.text, e.omitted = text, omitted
	}
	stats := RetentionStats{OriginalMessages: len(items), RetainedMessages: retainedCount, OmittedMessages: omittedMessages, OmittedBytes: dropped}
	for _, it := range items {
		stats.Compacted = stats.Compacted || it.checkpoint
	}
	for _, e := range retained {
		stats.OmittedBytes += e.omitted
	}
	stats.Truncated = stats.OmittedMessages > 0 || stats.OmittedBytes > 0
	return serialize(), stats, nil
}

// TestRetainMatchesNaive compares Retain with the literal dsh algorithm on
// random sources and budgets.
func TestRetainMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	outcomes := map[string]int{}
	for iter := range 600 {
		items, maxText := rng.IntN(30), 1+rng.IntN(200)
		if iter%4 == 0 {
			items, maxText = 1+rng.IntN(2), 1+rng.IntN(1200) // nothing droppable: truncation alone
		}
		surface := randomSurface(rng, items, maxText)
		label := randomText(rng, 6)
		budget := int64(50 + rng.IntN(1500))
		wantData, wantStats, wantErr := naiveRetain(surface, label, budget)
		got, err := Retain(surface, label, budget)
		if CodeOf(err) != CodeOf(wantErr) || (err == nil) != (wantErr == nil) {
			t.Fatalf("iteration %d: error %v, naive %v", iter, err, wantErr)
		}
		if err != nil {
			outcomes["exceeded"]++
			continue
		}
		data := got.Data.AppendJSON(nil)
		if !bytes.Equal(data, wantData) || got.Stats != wantStats {
			t.Fatalf("iteration %d budget %d:\n got %s %+v\nwant %s %+v", iter, budget, data, got.Stats, wantData, wantStats)
		}
		dropped := got.Stats.OmittedMessages > 0
		cut := bytes.Contains(data, []byte(" UTF-8 bytes …]")) // random texts never hold the notice
		switch {
		case dropped && cut:
			outcomes["dropped+truncated"]++
		case dropped:
			outcomes["dropped"]++
		case cut:
			outcomes["truncated"]++
		default:
			outcomes["whole"]++
		}
		if bytes.Contains(data, []byte(`\ud800`)) {
			outcomes["lone surrogate kept"]++
		}
	}
	// Both phases, each alone and one after the other, over texts with
	// escapes, multibyte characters and lone surrogates.
	t.Logf("outcomes: %v", outcomes)
	for _, k := range []string{"exceeded", "dropped", "truncated", "dropped+truncated", "whole", "lone surrogate kept"} {
		if outcomes[k] == 0 {
			t.Errorf("no %s outcome in %v", k, outcomes)
		}
	}
}

// TestTruncateWithNotice covers the notice thresholds and UTF-8 cuts of
// conformance §9 directly.
func TestTruncateWithNotice(t *testing.T) {
	tests := []struct {
		text        string
		maxOut      int64
		want        string
		wantOmitted int64
	}{
		{strings.Repeat("z", 500), 33, "", 500},
		{strings.Repeat("z", 500), 34, "\n[… omitted 500 UTF-8 bytes …]", 500},
		{strings.Repeat("z", 500), 35, "z\n[… omitted 499 UTF-8 bytes …]", 499},
		{strings.Repeat("🙂", 100), 37, "\n[… omitted 400 UTF-8 bytes …]", 400},
		{strings.Repeat("🙂", 100), 38, "🙂\n[… omitted 396 UTF-8 bytes …]", 396},
		{strings.Repeat("🙂", 100), 41, "🙂\n[… omitted 396 UTF-8 bytes …]", 396},
		// Head BOM+"h" decodes to "h"; the BOM is not counted as omitted.
		{"\uFEFFhead text " + strings.Repeat("q", 300) + "\uFEFFtail text", 39, "htext\n[… omitted 317 UTF-8 bytes …]", 317},
		{"", 10, "", 0},
	}
	for _, tt := range tests {
		got, omitted := truncateWithNotice(tt.text, tt.maxOut)
		if got != tt.want || omitted != tt.wantOmitted {
			t.Errorf("truncateWithNotice(%.20q…, %d) = %q, %d; want %q, %d", tt.text, tt.maxOut, got, omitted, tt.want, tt.wantOmitted)
		}
	}
}

// TestTextEncoderBytes checks that lone surrogates (WTF-8) and invalid bytes
// count as U+FFFD, as JS TextEncoder does.
func TestTextEncoderBytes(t *testing.T) {
	tests := map[string]string{
		"plain":          "plain",
		"a\xed\xa0\x80b": "a\uFFFDb",
		"\xff":           "\uFFFD",
		"界\xed\xbf\xbf🙂": "界\uFFFD🙂",
	}
	for in, want := range tests {
		if got := string(textEncoderBytes(in)); got != want {
			t.Errorf("textEncoderBytes(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRetainBudgetExceededIsCoded(t *testing.T) {
	s := &Surface{Header: SessionHeader{ID: "s"}}
	_, err := Retain(s, "s", 83)
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeBudgetExceeded || e.Message != "referenced session snapshot cannot fit the configured byte budget" {
		t.Fatalf("err = %v", err)
	}
	if _, err := Retain(s, "s", 84); err != nil {
		t.Fatalf("B=84: %v", err)
	}
}

// TestRetainDecodesOnlyKeptItems checks that the drop phase never decodes
// or measures the items it drops: on a large source only the kept items
// (and the first newest item that did not fit) are measured.
func TestRetainDecodesOnlyKeptItems(t *testing.T) {
	for _, n := range []int{1, 2, 10, 3_000} {
		s := benchSurface(n, 300)
		items, err := projectSurface(s)
		if err != nil {
			t.Fatal(err)
		}
		r := newRetainer(s, "bench", items, 65536)
		if err := r.run(); err != nil {
			t.Fatal(err)
		}
		measured := 0
		for _, it := range r.items {
			if it.measured {
				measured++
			}
		}
		if measured > r.live+1 {
			t.Errorf("%d items: measured %d, kept %d", n, measured, r.live)
		}
		if n == 3_000 && r.live > 300 {
			t.Errorf("kept %d of 3000 items in 64 KiB", r.live)
		}
	}
}
