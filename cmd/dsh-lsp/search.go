package main

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/dsh-lsp/dsh-lsp/contentindex"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// searchCmd is `dsh-lsp search [flags] [--limit N] [--no-cache] QUERY`:
// the content-search hits of QUERY (CONTRACT §9). The content index is
// kept beside the session index in the user cache directory; with
// --no-cache both live in memory for this run and nothing is written.
func searchCmd(args []string) (any, error) {
	var c common
	fs := newFlagSet("search")
	c.register(fs)
	limitStr := fs.String("limit", "", "maximum number of hits (default 20, at most 200)")
	noCache := registerNoCache(fs)
	noContent := fs.Bool("no-content-index", false, "content search off: build and keep no content index")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return nil, err
	}
	if len(pos) != 1 {
		return nil, usageError("search takes one QUERY argument (quote it); got %d", len(pos))
	}
	if _, err := c.config(); err != nil {
		return nil, err
	}
	limit := contentindex.DefaultLimit
	if c.isSet("limit") {
		v, perr := strconv.ParseFloat(*limitStr, 64)
		if perr != nil {
			v = 0.5 // not a number: refused below with dsh's message
		}
		n, err := reference.CheckCandidateLimit(v)
		if err != nil {
			return nil, err
		}
		limit = int(min(n, contentindex.MaxLimit))
	}
	root, err := sessionstore.ResolveRoot(c.sessions)
	if err != nil {
		return nil, &cliError{Code: reference.CodeReadFailed, Message: "cannot resolve the session store root: " + err.Error()}
	}
	opts := sessionstore.IndexOptions{
		Snapshot:  true,
		ReadLimit: c.readLimit(),
		Logf: func(format string, args ...any) {
			fmt.Fprintf(os.Stderr, "dsh-lsp: warning: %s\n", oneLine(fmt.Sprintf(format, args...)))
		},
	}
	if *noCache {
		opts.CacheDir = sessionstore.NoCache
	}
	x, err := sessionstore.OpenIndexed(root, opts)
	if err != nil {
		return nil, &cliError{Code: reference.CodeReadFailed, Message: fmt.Sprintf("cannot open session store %q: %v", root, err)}
	}
	defer x.Close()
	if *noContent {
		contentindex.Remove(x.ContentIndexPath())
		return nil, usageError("search needs the content index, which --no-content-index turns off")
	}
	if err := x.Wait(context.Background()); err != nil {
		return nil, err
	}
	ix, err := contentindex.Open(x.ContentIndexPath(), contentindex.Options{Logf: opts.Logf})
	if err != nil {
		return nil, &cliError{Code: reference.CodeReadFailed, Message: err.Error()}
	}
	defer ix.Close()
	items, err := ix.Find(context.Background(), x, c.target(), pos[0], limit)
	if err != nil {
		return nil, &cliError{Code: reference.CodeReadFailed, Message: "content search: " + err.Error()}
	}
	return items, nil
}
