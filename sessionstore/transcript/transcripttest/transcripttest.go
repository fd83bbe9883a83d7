// Package transcripttest is the full load of a transcript, kept for tests
// as the oracle the index's incremental read is checked against: the whole
// log in memory, scanned and folded through the production cursor and fold,
// keeping every event.
package transcripttest

import (
	"encoding/json"
	"io"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript"
)

// ScannedLog is the result of scanning one transcript (spec §3): the
// header and the contiguous event prefix, before the legacy upgrade and
// validation.
type ScannedLog struct {
	Header     *transcript.Header
	HeaderLine []byte
	// Events is the valid contiguous prefix (packed rows expanded).
	Events []transcript.Event
	// Offset is the file offset after the last good line (raw) or after
	// the last complete frame (zstd).
	Offset int64
	// TornBytes is the number of logical bytes dropped as a torn tail.
	TornBytes int64
	// Frames is the number of complete zstd frames (0 for raw).
	Frames int
}

// Log is one loaded session: what dsh's coordinator hands to session-query
// after reading, upgrading, validating and repairing a stored log (spec §4).
type Log struct {
	Header *transcript.Header
	// Events are the upgraded stored events followed by the in-memory crash
	// closers; Events[i].Seq == i.
	Events []transcript.Event
	// Stored is the number of stored events (Events[Stored:] are closers).
	Stored int
	// TornBytes and Frames come from the scan.
	TornBytes int64
	Frames    int
	// Surface holds the folded surface nodes (seqs, in surface order).
	Surface      []int64
	Replacements []Replacement
}

// Replacement records one replace operation of the fold.
type Replacement struct {
	Seq, Start, End int64
	// Shadowed are the surface nodes the replace removed, in surface order.
	Shadowed []int64
}

// ScanRaw scans a raw JSONL transcript held in memory (spec §3.1),
// keeping every event (packed rows expanded).
func ScanRaw(data []byte) (*ScannedLog, error) {
	cur := transcript.NewCursorBytes(data, transcript.Lines, transcript.Options{ExpandRows: true})
	defer cur.Close()
	out := &ScannedLog{}
	for {
		rec, err := cur.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if rec.Header != nil {
			out.Header, out.HeaderLine = rec.Header, rec.HeaderLine
			continue
		}
		out.Events = append(out.Events, rec.Events...)
	}
	out.Offset = cur.Position().Offset
	out.TornBytes = int64(len(data)) - out.Offset
	return out, nil
}

// LoadLog turns a scanned log into a Log: id check, legacy upgrade (§2.9),
// message shape checks, unknown-type refusal, crash closers, whole-log
// validation and the surface fold (§4 steps 2–6). wantID is the id the log
// was looked up by.
func LoadLog(scan *ScannedLog, wantID string) (*Log, error) {
	h := scan.Header
	if h.ID != wantID {
		return nil, transcript.Corruptf("header id %s does not match the requested id", jsjson.Quote(h.ID))
	}
	if err := h.Validate(); err != nil {
		return nil, err
	}
	// Every message id is kept, so the legacy upgrade's cross-event
	// question is answered in one pass.
	events := scan.Events
	f := transcript.ResumeFold(h.ID, transcript.FoldState{KeepIDs: true})
	var reps []Replacement
	f.OnNode = func(e *transcript.Event, _ int, shadowed []int64) {
		if shadowed != nil {
			var op struct{ Start, End float64 }
			_ = json.Unmarshal(e.SurfaceOp, &op) // the fold accepted it
			reps = append(reps, Replacement{Seq: e.Seq, Start: int64(op.Start), End: int64(op.End), Shadowed: shadowed})
		}
	}
	for i := range events {
		f.Stored(&events[i])
	}
	stored := len(events)
	closers, err := f.Finish()
	if err != nil {
		return nil, err
	}
	events = append(events, closers...)
	return &Log{Header: h, Events: events, Stored: stored, TornBytes: scan.TornBytes, Frames: scan.Frames,
		Surface: f.Nodes, Replacements: reps}, nil
}
