package sessionstore

import (
	"context"

	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript"
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
