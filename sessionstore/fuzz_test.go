package sessionstore

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript/transcripttest"
)

// loadAll runs the whole read pipeline over one scanned log and checks
// that what it returns is well-formed.
func loadAll(t *testing.T, scan *transcripttest.ScannedLog, err error) {
	if err != nil {
		if KindOf(attach(err, "fuzz", "")) == 0 {
			t.Fatalf("scan error without a class: %v", err)
		}
		return
	}
	log, err := transcripttest.LoadLog(scan, scan.Header.ID)
	if err != nil {
		if KindOf(attach(err, scan.Header.ID, "")) == 0 {
			t.Fatalf("load error without a class: %v", err)
		}
		return
	}
	for i, e := range log.Events {
		if e.Seq != int64(i) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
	}
	s := surfaceSnapshot(log)
	if out := MarshalSurface(s); !json.Valid(out) {
		t.Fatalf("readSurface object is not valid JSON: %s", out)
	}
	if title, err := logTitle(log); err == nil && title != nil {
		if b, err := json.Marshal(title); err != nil || !json.Valid(b) {
			t.Fatalf("title does not marshal: %v", err)
		}
	}
}

// addFixtureSeeds adds the raw fixture transcripts and the golden
// jsonl-root logs as seeds (the committed corpus is in testdata/fuzz).
func addFixtureSeeds(f *testing.F, pattern string) {
	matches, _ := filepath.Glob(filepath.Join("..", "testdata", pattern))
	for _, m := range matches {
		if data, err := os.ReadFile(m); err == nil {
			f.Add(data)
		}
	}
}

// FuzzScanRaw: the raw log scanner, legacy upgrade, validation, closers
// and fold never panic, classify every error, and emit valid JSON.
func FuzzScanRaw(f *testing.F) {
	addFixtureSeeds(f, "fixtures/store-raw/*/*/session.jsonl")
	addFixtureSeeds(f, "golden/jsonl-root/*/*/session.jsonl")
	f.Add([]byte(`{"type":"session","version":0,"id":"s","createdAt":1,"delegationDepth":0}` + "\n" +
		`{"type":"text-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1],"texts":["a","b"]}}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		scan, err := transcripttest.ScanRaw(data)
		loadAll(t, scan, err)
	})
}

// FuzzScanZstd: the zstd frame scanner and decoder never panic.
func FuzzScanZstd(f *testing.F) {
	addFixtureSeeds(f, "fixtures/store-zstd/*/*/session.jsonl.zstd")
	f.Fuzz(func(t *testing.T, data []byte) {
		scan, err := ScanZstd(data)
		loadAll(t, scan, err)
	})
}
