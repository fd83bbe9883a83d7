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
	// The store behind the same index as candidates (and its cache, unless
	// --no-cache), its first pass complete.
	_, src, closeSrc, err := c.indexedService(*noCache, os.Stderr)
	if err != nil {
		return nil, err
	}
	defer closeSrc()
	x := src.(*sessionstore.Indexed)
	if *noContent {
		contentindex.Remove(x.ContentIndexPath())
		return nil, usageError("search needs the content index, which --no-content-index turns off")
	}
	ix, err := contentindex.Open(x.ContentIndexPath(), contentindex.Options{Logf: func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "dsh-lsp: warning: %s\n", oneLine(fmt.Sprintf(format, args...)))
	}})
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
