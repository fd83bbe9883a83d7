package sessionstore

import (
	"encoding/json"

	"github.com/dsh-lsp/dsh-lsp/reference"
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

// CapturedThroughSeq is the seq of the last loaded event (closers
// included), nil for an empty log.
func (l *Log) CapturedThroughSeq() *int64 {
	if len(l.Events) == 0 {
		return nil
	}
	s := l.Events[len(l.Events)-1].Seq
	return &s
}

// SurfaceSnapshot returns readSurface's snapshot of the log.
func (l *Log) SurfaceSnapshot() *reference.Surface {
	s := &reference.Surface{
		Session:            l.Header.Object(),
		Header:             l.Header.Reference(),
		CapturedThroughSeq: l.CapturedThroughSeq(),
		Events:             make([]reference.SurfaceEvent, 0, len(l.Surface)),
	}
	for _, seq := range l.Surface {
		e := l.Events[seq]
		s.Events = append(s.Events, reference.SurfaceEvent{Type: e.Type, Seq: e.Seq, Data: e.Data, Raw: e.appendJSON(nil)})
	}
	return s
}

// Title is a session/title snapshot (dsh foldSessionTitle).
type Title struct {
	Title       json.RawMessage `json:"title"`
	MessageSeqs json.RawMessage `json:"messageSeqs"`
	Source      json.RawMessage `json:"source"`
	EventSeq    int64           `json:"eventSeq"`
	UpdatedAt   int64           `json:"updatedAt"`
}

// Title folds the latest session/title event (spec §8). It returns nil
// when the log has no title event, and an error for malformed title data
// (messageSeqs not an array, source not an object, unknown source kind, or
// — a dsh-lsp choice, since labels are strings — a non-string title), or
// for one over the size bounds (MaxTitleBytes, field_bounds.go).
func (l *Log) Title() (*Title, error) {
	for i := len(l.Events) - 1; i >= 0; i-- {
		e := &l.Events[i]
		if e.Type != "session/title" {
			continue
		}
		if len(e.Data) > maxTitleEventBytes {
			return nil, titleTooLarge(e.Seq, "data", len(e.Data), maxTitleEventBytes)
		}
		d, ok := e.obj()
		if !ok {
			return nil, corruptf("event %d: session/title data is not an object", e.Seq)
		}
		if !isArray(d["messageSeqs"]) {
			return nil, corruptf("event %d: session/title messageSeqs is not an array", e.Seq)
		}
		src, ok := parseObject(d["source"])
		if !ok {
			return nil, corruptf("event %d: session/title source is not an object", e.Seq)
		}
		switch k, _ := str(src["kind"]); k {
		case "fallback", "provider", "user":
		default:
			return nil, corruptf("event %d: session/title source kind %s is unknown", e.Seq, string(compact(src["kind"])))
		}
		if t, ok := str(d["title"]); !ok {
			return nil, corruptf("event %d: session/title title is not a string", e.Seq)
		} else if len(t) > MaxTitleBytes {
			return nil, titleTooLarge(e.Seq, "title", len(t), MaxTitleBytes)
		}
		return &Title{Title: compact(d["title"]), MessageSeqs: compact(d["messageSeqs"]), Source: compact(d["source"]),
			EventSeq: e.Seq, UpdatedAt: e.Time}, nil
	}
	return nil, nil
}

// Text returns the title string.
func (t *Title) Text() string {
	s, _ := str(t.Title)
	return s
}
