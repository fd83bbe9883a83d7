package transcript

import (
	"encoding/json"
	"io"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// Log is one loaded session: what dsh's coordinator hands to session-query
// after reading, upgrading, validating and repairing a stored log (spec §4).
type Log struct {
	Header *Header
	// Events are the upgraded stored events followed by the in-memory crash
	// closers; Events[i].Seq == i.
	Events []Event
	// Stored is the number of stored events (Events[Stored:] are closers).
	Stored int
	// TornBytes and Frames come from the scan (see ScannedLog).
	TornBytes int64
	Frames    int
	// Surface holds the folded surface nodes (seqs, in surface order).
	Surface      []int64
	Replacements []Replacement
}

// Title is a session/title snapshot (dsh foldSessionTitle).
type Title struct {
	Title       json.RawMessage `json:"title"`
	MessageSeqs json.RawMessage `json:"messageSeqs"`
	Source      json.RawMessage `json:"source"`
	EventSeq    int64           `json:"eventSeq"`
	UpdatedAt   int64           `json:"updatedAt"`
}

// TitleOf folds the session/title event e (spec §8). It returns an error
// for malformed title data (messageSeqs not an array, source not an
// object, unknown source kind, or — a dsh-lsp choice, since labels are
// strings — a non-string title), or for one over the size bounds
// (MaxTitleBytes, field_bounds.go).
func TitleOf(e *Event) (*Title, error) {
	if len(e.Data) > maxTitleEventBytes {
		return nil, titleTooLarge(e.Seq, "data", len(e.Data), maxTitleEventBytes)
	}
	d, ok := e.obj()
	if !ok {
		return nil, Corruptf("event %d: session/title data is not an object", e.Seq)
	}
	if !isArray(d["messageSeqs"]) {
		return nil, Corruptf("event %d: session/title messageSeqs is not an array", e.Seq)
	}
	src, ok := parseObject(d["source"])
	if !ok {
		return nil, Corruptf("event %d: session/title source is not an object", e.Seq)
	}
	switch k, _ := str(src["kind"]); k {
	case "fallback", "provider", "user":
	default:
		return nil, Corruptf("event %d: session/title source kind %s is unknown", e.Seq, string(Compact(src["kind"])))
	}
	if t, ok := str(d["title"]); !ok {
		return nil, Corruptf("event %d: session/title title is not a string", e.Seq)
	} else if len(t) > MaxTitleBytes {
		return nil, titleTooLarge(e.Seq, "title", len(t), MaxTitleBytes)
	}
	return &Title{Title: Compact(d["title"]), MessageSeqs: Compact(d["messageSeqs"]), Source: Compact(d["source"]),
		EventSeq: e.Seq, UpdatedAt: e.Time}, nil
}

// Text returns the title string.
func (t *Title) Text() string {
	s, _ := str(t.Title)
	return s
}

// ScannedLog is the result of scanning one transcript (spec §3): the
// header and the contiguous event prefix, before the legacy upgrade and
// validation.
type ScannedLog struct {
	Header     *Header
	HeaderLine []byte
	// Events is the valid contiguous prefix (packed rows expanded).
	Events []Event
	// Offset is the file offset after the last consumed good data: after
	// the last good line (raw) or after the last complete frame (zstd).
	// An incremental reader can resume scanning there.
	Offset int64
	// TornBytes is the number of logical bytes dropped as a torn tail
	// (bad line onwards or a final line without "\n").
	TornBytes int64
	// Frames is the number of complete zstd frames (0 for raw).
	Frames int
}

// ScanRaw scans a raw JSONL transcript held in memory (spec §3.1),
// keeping every event (packed rows expanded).
func ScanRaw(data []byte) (*ScannedLog, error) {
	cur := NewCursorBytes(data, Lines, Options{ExpandRows: true})
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
		return nil, Corruptf("header id %s does not match the requested id", jsjson.Quote(h.ID))
	}
	if err := h.Validate(); err != nil {
		return nil, err
	}
	// The keep-every-event policy of the fold: the events are at hand, so
	// the legacy upgrade's cross-event question is answered from them.
	events := scan.Events
	f := ResumeFold(h.ID, FoldState{})
	f.earlier = func(seq int64) string { return messageID(&events[seq]) }
	var reps []Replacement
	f.OnNode = func(e *Event, _ int, shadowed []int64) {
		if shadowed != nil {
			start, end, _ := parseReplaceOp(e.SurfaceOp)
			reps = append(reps, Replacement{Seq: e.Seq, Start: start, End: end, Shadowed: shadowed})
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
	for i := range events {
		events[i].DropCache()
	}
	return &Log{Header: h, Events: events, Stored: stored, TornBytes: scan.TornBytes, Frames: scan.Frames,
		Surface: f.Nodes, Replacements: reps}, nil
}
