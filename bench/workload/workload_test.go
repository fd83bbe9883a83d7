package workload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/sessionstore/storepath"
	"github.com/klauspost/compress/zstd"
)

// checkLog validates a plaintext log against the format rules the
// generator must honour (spec §2-§5): header shape, seq contiguity after
// packed-row expansion, surfaceOp only on surface types, sourceEventSeqs
// below the event's seq without duplicates, and a valid fold. It returns
// the folded surface and the latest title.
func checkLog(t *testing.T, plain []byte) (surface []int64, title string) {
	t.Helper()
	lines := bytes.Split(bytes.TrimSuffix(plain, []byte("\n")), []byte("\n"))
	var hdr map[string]any
	if err := json.Unmarshal(lines[0], &hdr); err != nil {
		t.Fatalf("header: %v", err)
	}
	if hdr["type"] != "session" || hdr["version"] != 0.0 || hdr["delegationDepth"] != 0.0 {
		t.Fatalf("bad header %s", lines[0])
	}
	next := int64(0)
	for n, line := range lines[1:] {
		var ev struct {
			Type            string          `json:"type"`
			Seq             *int64          `json:"seq"`
			Seq0            *int64          `json:"seq0"`
			Data            json.RawMessage `json:"data"`
			SurfaceOp       json.RawMessage `json:"surfaceOp"`
			SourceEventSeqs []int64         `json:"sourceEventSeqs"`
		}
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("line %d: %v", n+2, err)
		}
		switch ev.Type {
		case "text-chunks", "reasoning-chunks", "tool-call-chunks":
			var d struct {
				DT    []int64  `json:"dt"`
				Texts []string `json:"texts"`
				Args  []string `json:"args"`
			}
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				t.Fatalf("line %d: %v", n+2, err)
			}
			members := len(d.Texts) + len(d.Args)
			if ev.Seq0 == nil || *ev.Seq0 != next || members < 3 || len(d.DT) != members-1 {
				t.Fatalf("line %d: bad packed row %s", n+2, line)
			}
			next += int64(members)
			continue
		}
		if ev.Seq == nil || *ev.Seq != next {
			t.Fatalf("line %d: seq %v, want %d", n+2, ev.Seq, next)
		}
		seq := *ev.Seq
		next++
		surfaceType := ev.Type == "user/message" || ev.Type == "assistant/message" || ev.Type == "tool/result"
		if !surfaceType {
			if ev.SurfaceOp != nil || ev.SourceEventSeqs != nil {
				t.Fatalf("seq %d: %s carries surface fields", seq, ev.Type)
			}
			if ev.Type == "session/title" {
				var d struct{ Title string }
				json.Unmarshal(ev.Data, &d)
				title = d.Title
			}
			continue
		}
		seen := map[int64]bool{}
		for _, s := range ev.SourceEventSeqs {
			if s >= seq || seen[s] {
				t.Fatalf("seq %d: bad sourceEventSeqs %v", seq, ev.SourceEventSeqs)
			}
			seen[s] = true
		}
		if string(ev.SurfaceOp) == `"append"` {
			surface = append(surface, seq)
			continue
		}
		var op struct {
			Op         string
			Start, End int64
		}
		if err := json.Unmarshal(ev.SurfaceOp, &op); err != nil || op.Op != "replace" {
			t.Fatalf("seq %d: bad surfaceOp %s", seq, ev.SurfaceOp)
		}
		i, j := indexOf(surface, op.Start), indexOf(surface, op.End)
		if i < 0 || j < i {
			t.Fatalf("seq %d: replace %d..%d not on surface %v", seq, op.Start, op.End, surface)
		}
		for _, s := range surface[i : j+1] {
			if !seen[s] {
				t.Fatalf("seq %d: shadowed %d not in sourceEventSeqs", seq, s)
			}
		}
		surface = append(append(append([]int64(nil), surface[:i]...), seq), surface[j+1:]...)
	}
	return surface, title
}

func indexOf(s []int64, v int64) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// zstdFrames decodes every frame of a zstd transcript separately.
func zstdFrames(t *testing.T, data []byte) [][]byte {
	t.Helper()
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	var frames [][]byte
	for len(data) > 0 {
		var h zstd.Header
		if err := h.Decode(data); err != nil {
			t.Fatalf("frame header: %v", err)
		}
		n := frameLen(t, data)
		out, err := dec.DecodeAll(data[:n], nil)
		if err != nil {
			t.Fatalf("frame %d: %v", len(frames), err)
		}
		frames = append(frames, out)
		data = data[n:]
	}
	return frames
}

// frameLen walks a frame structurally (spec §3.2) and returns its length.
func frameLen(t *testing.T, b []byte) int {
	fhd := b[4]
	pos := 5
	single := fhd&0x20 != 0
	if !single {
		pos++
	}
	pos += []int{0, 1, 2, 4}[fhd&3]
	switch fhd >> 6 {
	case 0:
		if single {
			pos++
		}
	case 1:
		pos += 2
	case 2:
		pos += 4
	case 3:
		pos += 8
	}
	for {
		h := int(b[pos]) | int(b[pos+1])<<8 | int(b[pos+2])<<16
		pos += 3
		size := h >> 3
		if (h>>1)&3 == 1 {
			size = 1
		}
		pos += size
		if h&1 != 0 {
			break
		}
	}
	if fhd&4 != 0 {
		pos += 4
	}
	return pos
}

func TestGeneratedLogsAreValid(t *testing.T) {
	cases := []struct {
		name string
		opts Options
	}{
		{"raw natural", Options{Sessions: 6, CWDs: 2, Compression: None, Seed: 1}},
		{"zstd compactions multibyte", Options{Sessions: 4, CWDs: 2, Turns: 30, Compression: Zstd, Multibyte: 0.5, Compactions: 3, Seed: 2}},
		{"raw sized", Options{Sessions: 2, CWDs: 1, Size: 1 << 20, Compression: None, Compactions: 2, Seed: 3, NoCWD: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			infos, err := Generate(root, tc.opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(infos) != tc.opts.Sessions {
				t.Fatalf("got %d sessions", len(infos))
			}
			for _, in := range infos {
				data, err := os.ReadFile(in.Path)
				if err != nil {
					t.Fatal(err)
				}
				plain := data
				if tc.opts.Compression == Zstd {
					frames := zstdFrames(t, data)
					if len(frames) != in.Batches+1 {
						t.Fatalf("%d frames, want %d", len(frames), in.Batches+1)
					}
					if bytes.Count(frames[0], []byte("\n")) != 1 {
						t.Fatalf("header frame holds %q", frames[0])
					}
					plain = bytes.Join(frames, nil)
				}
				if int64(len(plain)) != in.Plain || int64(len(data)) != in.File {
					t.Fatalf("sizes: plain %d/%d file %d/%d", len(plain), in.Plain, len(data), in.File)
				}
				surface, title := checkLog(t, plain)
				if len(surface) == 0 || title != in.Title {
					t.Fatalf("surface %v, title %q want %q", surface, title, in.Title)
				}
				if tc.opts.Size > 0 {
					if r := float64(in.Plain) / float64(tc.opts.Size); r < 0.9 || r > 1.1 {
						t.Fatalf("plain size %d is not within 10%% of %d", in.Plain, tc.opts.Size)
					}
				}
				wantDir := "_no-cwd"
				if in.CWD != "" {
					wantDir, _ = storepath.ProjectKey(in.CWD)
				}
				if rel, _ := filepath.Rel(root, in.Path); rel != filepath.Join(wantDir, in.ID, "session"+tc.opts.Compression.Suffix()) {
					t.Fatalf("path %s", rel)
				}
			}
		})
	}
}

func TestCompactionsReplaceSurface(t *testing.T) {
	spec := SessionSpec{ID: "s", CWD: "/w", CreatedAt: BaseTime, Turns: 12, Compactions: 2, Seed: 9}
	header, batches := Batches(spec)
	plain := append(header, bytes.Join(batches, nil)...)
	if n := bytes.Count(plain, []byte(`"op":"replace"`)); n != 2 {
		t.Fatalf("%d replace ops, want 2", n)
	}
	surface, _ := checkLog(t, plain)
	gen := NewSession(spec)
	gen.Header()
	for gen.NextBatch() != nil {
	}
	if fmt.Sprint(surface) != fmt.Sprint(gen.Surface()) {
		t.Fatalf("fold %v, generator %v", surface, gen.Surface())
	}
}

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"20MB", 20 << 20, true},
		{"512KB", 512 << 10, true},
		{"2GB", 2 << 30, true},
		{"1.5 gb", 3 << 29, true},
		{" 4096 ", 4096, true},
		{"100B", 100, true},
		{"0", 0, true},
		{"", 0, false},
		{"MB", 0, false},
		{"-1MB", 0, false},
		{"20 megabytes", 0, false},
	} {
		got, err := ParseSize(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
}
