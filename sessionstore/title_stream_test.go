package sessionstore

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
	"github.com/klauspost/compress/zstd"
)

// checkStreamedTitle compares the streamed ReadTitle and ReadSurface with
// the full Load + Title / SurfaceSnapshot they replace, for one id of s.
func checkStreamedTitle(t *testing.T, s *Store, id, label string) {
	t.Helper()
	ctx := context.Background()
	got, gotErr := s.ReadTitle(ctx, id)
	want, wantErr := s.loadTitle(ctx, id)
	if (gotErr == nil) != (wantErr == nil) || gotErr != nil && (gotErr.Error() != wantErr.Error() || KindOf(gotErr) != KindOf(wantErr)) {
		t.Errorf("%s: streamed error %v, full load error %v", label, gotErr, wantErr)
		return
	}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if !bytes.Equal(g, w) {
		t.Errorf("%s: streamed title %s, full load title %s", label, g, w)
	}
	// The streamed surface read, likewise.
	gs, gsErr := s.ReadSurface(ctx, id)
	ws, wsErr := s.loadSurface(ctx, id)
	if (gsErr == nil) != (wsErr == nil) || gsErr != nil && (gsErr.Error() != wsErr.Error() || KindOf(gsErr) != KindOf(wsErr)) {
		t.Errorf("%s: streamed surface error %v, full load error %v", label, gsErr, wsErr)
		return
	}
	if gsErr == nil {
		if g, w := MarshalSurface(gs), MarshalSurface(ws); !bytes.Equal(g, w) {
			t.Errorf("%s: streamed surface\n%s\nfull load\n%s", label, g, w)
		}
		for i := range gs.Events {
			if !bytes.Equal(gs.Events[i].Data, ws.Events[i].Data) || gs.Events[i].Type != ws.Events[i].Type {
				t.Errorf("%s: surface event %d differs", label, i)
			}
		}
		if !reflect.DeepEqual(gs.Header, ws.Header) || !bytes.Equal(gs.Session, ws.Session) {
			t.Errorf("%s: surface header differs", label)
		}
	}
}

// TestStreamedTitleMatchesLoadOnStores: every session of the fixture and
// golden stores, listed or not.
func TestStreamedTitleMatchesLoadOnStores(t *testing.T) {
	roots, _ := filepath.Glob(filepath.Join("..", "testdata", "fixtures", "store-*"))
	roots = append(roots, filepath.Join("..", "testdata", "golden", "jsonl-root"))
	// Generated sessions cut after a few batches (open turns, packed rows,
	// compaction replaces), in both encodings.
	for _, comp := range []workload.Compression{workload.None, workload.Zstd} {
		r := filepath.Join(t.TempDir(), string(comp))
		genStore(t, r, comp, 6, 3, 7)
		roots = append(roots, r)
	}
	n := 0
	for _, root := range roots {
		s, _ := Open(root)
		if _, err := s.Discover(context.Background()); err != nil {
			t.Fatal(err)
		}
		dirs, _ := filepath.Glob(filepath.Join(root, "*", "*"))
		for _, dir := range dirs {
			id, ok := DecodeSegment(filepath.Base(dir))
			if !ok {
				continue
			}
			checkStreamedTitle(t, s, id, dir)
			n++
		}
	}
	if n < 10 {
		t.Fatalf("only %d sessions compared; testdata missing?", n)
	}
}

// writeLog stores data as id's transcript in root (encoding enc).
func writeLog(t *testing.T, root, id string, enc Encoding, data []byte) {
	t.Helper()
	path, err := SessionPath(root, nil, id, enc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// framesOf encodes each line of text as its own zstd frame.
func framesOf(t *testing.T, text string, tornTail bool) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for _, line := range strings.SplitAfter(text, "\n") {
		if line != "" {
			out = enc.EncodeAll([]byte(line), out)
		}
	}
	if tornTail && len(out) > 8 {
		out = out[:len(out)-5]
	}
	return out
}

const (
	hdr  = `{"type":"session","version":0,"id":"s","createdAt":1,"delegationDepth":0}` + "\n"
	user = `{"type":"user/message","seq":%d,"time":1,"data":{"id":"u%d","role":"user","source":{"kind":"user"},"content":[]},"surfaceOp":"append"}` + "\n"
)

func userAt(seq int) string {
	return strings.ReplaceAll(user, "%d", strconv.Itoa(seq))
}

func title(seq int, text string) string {
	return `{"type":"session/title","seq":` + strconv.Itoa(seq) + `,"time":5,"data":{"title":` + strconv.Quote(text) +
		`,"messageSeqs":[],"source":{"kind":"user"}}}` + "\n"
}

func toolResult(seq int, call, content, op string, sources string) string {
	s := `{"type":"tool/result","seq":` + strconv.Itoa(seq) + `,"time":1,"data":{"message":{"id":"m","role":"user","source":{"kind":"tool","callId":"` + call + `"},"content":[{"type":"tool-result","toolCallId":"` + call +
		`","content":` + content + `}]}},"surfaceOp":` + op
	if sources != "" {
		s += `,"sourceEventSeqs":` + sources
	}
	return s + "}\n"
}

// TestStreamedTitleMatchesLoad: logs built to hit every pass of LoadLog,
// their ordering, the closers, the fold's tool/result rule, the legacy
// fallback and the scanner's torn-tail rules, in both encodings; plus the
// fuzz corpus.
func TestStreamedTitleMatchesLoad(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"empty":          "",
		"header only":    hdr,
		"no newline":     strings.TrimSuffix(hdr, "\n"),
		"titled":         hdr + userAt(0) + title(1, "first") + title(2, "second"),
		"torn tail":      hdr + title(0, "kept") + `{"type":"session/title","seq":1`,
		"bad then title": hdr + title(0, "kept") + "garbage\n" + title(2, "lost"),
		"committed":      hdr + title(0, "x") + "garbage\n" + `{"type":"turn/end","seq":2,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}` + "\n",
		"seq gap":        hdr + title(0, "x") + title(2, "y"),
		"bad title data": hdr + `{"type":"session/title","seq":0,"time":1,"data":{"title":3,"messageSeqs":[],"source":{"kind":"user"}}}` + "\n",
		"title kind":     hdr + `{"type":"session/title","seq":0,"time":1,"data":{"title":"t","messageSeqs":[],"source":{"kind":"x"}}}` + "\n",
		"unknown type":   hdr + title(0, "t") + `{"type":"new/thing","seq":1,"time":1,"data":{}}` + "\n",
		"ignorable":      hdr + title(0, "t") + `{"type":"new/thing","seq":1,"time":1,"data":{},"ignorable":true}` + "\n",
		// Pass order: the envelope error (seq 1) loses to the message
		// error (seq 2), which loses to the retired type (seq 3).
		"pass order": hdr + title(0, "t") + `{"type":"session/title","seq":1,"time":1,"data":{},"extra":1}` + "\n" +
			`{"type":"user/message","seq":2,"time":1,"data":{},"surfaceOp":"append"}` + "\n" +
			`{"type":"mode/set","seq":3,"time":1,"data":{}}` + "\n",
		"envelope then message": hdr + `{"type":"session/title","seq":0,"time":1,"data":{},"extra":1}` + "\n" +
			`{"type":"user/message","seq":1,"time":1,"data":{},"surfaceOp":"append"}` + "\n",
		"fold error":   hdr + userAt(0) + `{"type":"user/message","seq":1,"time":1,"data":{"id":"u","role":"user","source":{"kind":"user"},"content":[]}}` + "\n",
		"marker":       hdr + `{"type":"session/title","seq":0,"time":1,"data":{},"surfaceOp":"append"}` + "\n",
		"bad replace":  hdr + userAt(0) + `{"type":"user/message","seq":1,"time":1,"data":{"id":"u","role":"user","source":{"kind":"user"},"content":[]},"surfaceOp":{"op":"replace","start":0,"end":0},"sourceEventSeqs":[]}` + "\n",
		"good replace": hdr + userAt(0) + `{"type":"user/message","seq":1,"time":1,"data":{"id":"u","role":"user","source":{"kind":"user"},"content":[]},"surfaceOp":{"op":"replace","start":0,"end":0},"sourceEventSeqs":[0]}` + "\n" + title(2, "r"),
		"tool replace same": hdr + toolResult(0, "c", `[{"type":"text","text":"a"}]`, `"append"`, "") +
			toolResult(1, "c", `[]`, `{"op":"replace","start":0,"end":0}`, "[0]") + title(2, "ok"),
		"tool replace other": hdr + toolResult(0, "c", `[]`, `"append"`, "") +
			toolResult(1, "d", `[]`, `{"op":"replace","start":0,"end":0}`, "[0]") + title(2, "no"),
		"tool replace zero": hdr +
			strings.Replace(toolResult(0, "c", `[]`, `"append"`, ""), `"message"`, `"n":-0,"message"`, 1) +
			strings.Replace(toolResult(1, "c", `[1]`, `{"op":"replace","start":0,"end":0}`, "[0]"), `"message"`, `"n":0.0,"message"`, 1) + title(2, "zero"),
		"tool replaces user": hdr + userAt(0) + toolResult(1, "c", `[]`, `{"op":"replace","start":0,"end":0}`, "[0]"),
		"open turn closers": hdr + `{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}` + "\n" +
			`{"type":"step/start","seq":1,"time":1,"data":{"turn":1,"step":1}}` + "\n" +
			`{"type":"assistant/message","seq":2,"time":1,"data":{"turn":1,"step":1,"message":{"id":"a","role":"assistant","source":{"kind":"model","provider":"p","model":"m"},"content":[{"type":"tool-call","id":"c1"}]}},"surfaceOp":"append"}` + "\n" +
			`{"type":"tool/call","seq":3,"time":1,"data":{"callId":"c1"}}` + "\n" + title(4, "open"),
		"closer without call id": hdr + `{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}` + "\n" +
			`{"type":"assistant/message","seq":1,"time":1,"data":{"turn":1,"step":1,"message":{"id":"a","role":"assistant","source":{"kind":"model","provider":"p","model":"m"},"content":[{"type":"tool-call"}]}},"surfaceOp":"append"}` + "\n" + title(2, "open"),
		"legacy user": hdr + `{"type":"user/message","seq":0,"time":1,"data":{"content":[],"source":{"kind":"user"}},"surfaceOp":"append"}` + "\n" + title(1, "legacy"),
		"legacy replacing result": hdr + `{"type":"tool/result","seq":0,"time":1,"data":{"callId":"c","content":[],"isError":false},"surfaceOp":"append"}` + "\n" +
			`{"type":"tool/result","seq":1,"time":1,"data":{"callId":"c","content":[1],"isError":false},"surfaceOp":{"op":"replace","start":0,"end":0},"sourceEventSeqs":[0]}` + "\n" + title(2, "legacy"),
		"packed row": hdr + `{"type":"text-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1],"texts":["a","b"]}}` + "\n" + title(2, "rows"),
		"wrong id":   strings.Replace(hdr, `"id":"s"`, `"id":"t"`, 1) + title(0, "x"),
		"version":    strings.Replace(hdr, `"version":0`, `"version":1`, 1),
	}
	root := t.TempDir()
	for name, text := range cases {
		for _, enc := range []Encoding{Raw, Zstd} {
			for _, torn := range []bool{false, true} {
				if torn && enc == Raw {
					continue
				}
				r := filepath.Join(root, strings.ReplaceAll(name, " ", "-")+"-"+enc.String()+strconv.FormatBool(torn))
				data := []byte(text)
				if enc == Zstd {
					data = framesOf(t, text, torn)
				}
				writeLog(t, r, "s", enc, data)
				s, _ := OpenEncoding(r, enc)
				checkStreamedTitle(t, s, "s", name+"/"+enc.String()+"/torn="+strconv.FormatBool(torn))
				// The index's streamed surfaces (open turns included)
				// equal the full read too.
				x := openIndexed(t, r, NoCache)
				sameAsStore(t, x, r)
				if strings.HasPrefix(name, "open turn") && x.Stats().FastSurfaces == 0 {
					t.Errorf("%s/%s: the open turn's surface was not built from the index", name, enc)
				}
			}
		}
	}
	// The committed fuzz corpus of the scanners.
	for _, enc := range []Encoding{Raw, Zstd} {
		dir := filepath.Join("testdata", "fuzz", map[Encoding]string{Raw: "FuzzScanRaw", Zstd: "FuzzScanZstd"}[enc])
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		for i, f := range files {
			data := corpusBytes(t, f)
			id := "x"
			var scan *ScannedLog
			var err error
			if enc == Raw {
				scan, err = ScanRaw(data)
			} else {
				scan, err = ScanZstd(data)
			}
			if err == nil && scan.Header.ID != "" {
				id = scan.Header.ID
			}
			r := filepath.Join(root, "corpus", enc.String()+strconv.Itoa(i))
			if _, err := SessionPath(r, nil, id, enc); err != nil {
				id = "x"
			}
			writeLog(t, r, id, enc, data)
			s, _ := OpenEncoding(r, enc)
			checkStreamedTitle(t, s, id, f)
		}
	}
}

// corpusBytes reads a "go test fuzz v1" file holding one []byte value.
func corpusBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(string(b), "\n", 3)
	if len(lines) < 2 || !strings.HasPrefix(lines[1], "[]byte(") {
		t.Fatalf("%s: not a []byte corpus file", path)
	}
	s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return []byte(s)
}
