package transcript

import (
	"bytes"
	"encoding/json"
)

// Title is a session/title snapshot (dsh foldSessionTitle).
type Title struct {
	Title       json.RawMessage `json:"title"`
	MessageSeqs json.RawMessage `json:"messageSeqs"`
	Source      json.RawMessage `json:"source"`
	EventSeq    int64           `json:"eventSeq"`
	UpdatedAt   int64           `json:"updatedAt"`
}

// TitleOf folds the session/title event e (spec §8): malformed data (a
// non-string title too, as labels are strings) or a title over
// MaxTitleBytes is an error.
func TitleOf(e *Event) (*Title, error) {
	if len(e.Data) > maxTitleEventBytes {
		return nil, titleTooLarge(e.Seq, "data", len(e.Data), maxTitleEventBytes)
	}
	d := rawObj(bytes.TrimSpace(e.Data))
	if !d.valid() {
		return nil, Corruptf("event %d: session/title data is not an object", e.Seq)
	}
	if !isArray(d.get("messageSeqs")) {
		return nil, Corruptf("event %d: session/title messageSeqs is not an array", e.Seq)
	}
	src := d.sub("source")
	if !src.valid() {
		return nil, Corruptf("event %d: session/title source is not an object", e.Seq)
	}
	switch k, _ := str(src.get("kind")); k {
	case "fallback", "provider", "user":
	default:
		return nil, Corruptf("event %d: session/title source kind %s is unknown", e.Seq, string(Compact(src.get("kind"))))
	}
	if t, ok := strView(d.get("title")); !ok { // only its length is kept
		return nil, Corruptf("event %d: session/title title is not a string", e.Seq)
	} else if len(t) > MaxTitleBytes {
		return nil, titleTooLarge(e.Seq, "title", len(t), MaxTitleBytes)
	}
	return &Title{Title: Compact(d.get("title")), MessageSeqs: Compact(d.get("messageSeqs")), Source: Compact(src.raw),
		EventSeq: e.Seq, UpdatedAt: e.Time}, nil
}

// Text returns the title string.
func (t *Title) Text() string {
	s, _ := str(t.Title)
	return s
}
