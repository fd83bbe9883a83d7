package sessionstore

import (
	"context"

	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript/transcripttest"
)

// readTitles reads the title of each id once (first occurrence wins), in
// order.
func readTitles(ctx context.Context, ids []string, read func(context.Context, string) (*transcript.Title, error)) ([]reference.TitleResult, error) {
	seen := make(map[string]bool, len(ids))
	var out []reference.TitleResult
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		r := reference.TitleResult{SessionID: id}
		t, err := read(ctx, id)
		if err != nil {
			r.Err = err
		} else if t != nil {
			title := t.Text()
			r.Title = &title
		}
		out = append(out, r)
	}
	return out, nil
}

// The keep-every-event log's answers, as the index's are compared with
// them.

// capturedThroughSeq is the seq of the last loaded event (closers
// included), nil for an empty log.
func capturedThroughSeq(l *transcripttest.Log) *int64 {
	if len(l.Events) == 0 {
		return nil
	}
	s := l.Events[len(l.Events)-1].Seq
	return &s
}

// surfaceSnapshot returns readSurface's snapshot of the log.
func surfaceSnapshot(l *transcripttest.Log) *reference.Surface {
	s := &reference.Surface{
		Session:            l.Header.Object(),
		Header:             l.Header.Reference(),
		CapturedThroughSeq: capturedThroughSeq(l),
		Events:             make([]reference.SurfaceEvent, 0, len(l.Surface)),
	}
	for _, seq := range l.Surface {
		e := l.Events[seq]
		s.Events = append(s.Events, reference.SurfaceEvent{Type: e.Type, Seq: e.Seq, Data: e.Data, Raw: e.AppendJSON(nil)})
	}
	return s
}

// logTitle folds the latest session/title event of the log (nil when it
// has none).
func logTitle(l *transcripttest.Log) (*transcript.Title, error) {
	for i := len(l.Events) - 1; i >= 0; i-- {
		if l.Events[i].Type == "session/title" {
			return transcript.TitleOf(&l.Events[i])
		}
	}
	return nil, nil
}
