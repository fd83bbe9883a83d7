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
	// One walk over the data and one over its source, the last of
	// duplicate keys winning (a lookup per field walked the data six
	// times: a first pass folds a title per session).
	var title, seqs, source, kind []byte
	if !rawObj(bytes.TrimSpace(e.Data)).each(func(k string, v []byte) {
		switch k {
		case "title":
			title = v
		case "messageSeqs":
			seqs = v
		case "source":
			source = v
		}
	}) {
		return nil, Corruptf("event %d: session/title data is not an object", e.Seq)
	}
	if !isArray(seqs) {
		return nil, Corruptf("event %d: session/title messageSeqs is not an array", e.Seq)
	}
	if !rawObj(source).each(func(k string, v []byte) {
		if k == "kind" {
			kind = v
		}
	}) {
		return nil, Corruptf("event %d: session/title source is not an object", e.Seq)
	}
	switch k, _ := str(kind); k {
	case "fallback", "provider", "user":
	default:
		return nil, Corruptf("event %d: session/title source kind %s is unknown", e.Seq, string(Compact(kind)))
	}
	if t, ok := strView(title); !ok { // only its length is kept
		return nil, Corruptf("event %d: session/title title is not a string", e.Seq)
	} else if len(t) > MaxTitleBytes {
		return nil, titleTooLarge(e.Seq, "title", len(t), MaxTitleBytes)
	}
	return &Title{Title: Compact(title), MessageSeqs: Compact(seqs), Source: Compact(source),
		EventSeq: e.Seq, UpdatedAt: e.Time}, nil
}

// Text returns the title string.
func (t *Title) Text() string {
	s, _ := str(t.Title)
	return s
}
