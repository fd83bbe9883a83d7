package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/dsh-lsp/dsh-lsp/contentindex"
	"github.com/dsh-lsp/dsh-lsp/mcpserver"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// mcpMain runs the MCP server over stdio (newline-delimited JSON-RPC) with
// the command line's common flags, behind the same store index as the
// language server. A bad flag or store exits 1 with the CLI's error JSON
// on stdout before any MCP traffic.
func mcpMain(args []string, stdout, stderr io.Writer) int {
	var c common
	fs := newFlagSet("mcp")
	c.register(fs)
	logFile := fs.String("log-file", "", "write logs to this file instead of stderr")
	logLevel := fs.String("log-level", "warn", "log level: debug, info, warn or error")
	noContent := fs.Bool("no-content-index", false, "content search off: build and keep no content index")
	pos, err := parseInterleaved(fs, args)
	if err == nil && len(pos) > 0 {
		err = usageError("mcp takes no arguments; got %q", pos[0])
	}
	var cfg reference.Config
	var root string
	if err == nil {
		cfg, err = c.config()
	}
	if err == nil {
		if root, err = sessionstore.ResolveRoot(c.sessions); err != nil {
			err = &cliError{Code: reference.CodeReadFailed, Message: "cannot resolve the session store root: " + err.Error()}
		}
	}
	if err != nil {
		return cliMain(stdout, stderr, func() (any, error) { return nil, err })
	}
	logger, closeLog, err := newLogger(*logFile, *logLevel, stderr)
	if err != nil {
		return cliMain(stdout, stderr, func() (any, error) { return nil, usageError("%v", err) })
	}
	defer closeLog()
	idx, err := sessionstore.OpenIndexed(root, sessionstore.IndexOptions{
		ReadLimit: c.readLimit(),
		Logf:      func(format string, args ...any) { logger.Warn(fmt.Sprintf(format, args...)) },
	})
	if err != nil {
		return cliMain(stdout, stderr, func() (any, error) {
			return nil, &cliError{Code: reference.CodeReadFailed, Message: fmt.Sprintf("cannot open session store %q: %v", root, err)}
		})
	}
	defer idx.Close()
	// The content index is synced by each content search (no background
	// work for agents that never search by content).
	var content *contentindex.Index
	if *noContent {
		contentindex.Remove(idx.ContentIndexPath())
	} else if content, err = contentindex.Open(idx.ContentIndexPath(), contentindex.Options{
		Logf: func(format string, args ...any) { logger.Warn(fmt.Sprintf(format, args...)) },
	}); err != nil {
		logger.Warn("content search unavailable", "error", err)
		content = nil
	} else {
		defer content.Close()
	}
	srv, err := mcpserver.New(mcpserver.Options{
		Source: idx, Config: cfg, Target: c.target(), Version: versionString(), Logger: logger, Content: content,
	})
	if err != nil {
		return cliMain(stdout, stderr, func() (any, error) { return nil, err })
	}
	// As for the language server: a client that goes away mid-write ends
	// the session with a write error instead of killing us with SIGPIPE.
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	in := newStdio()
	logger.Info("dsh-lsp mcp serving on stdio", "version", versionString(), "root", root, "pid", os.Getpid())
	err = srv.Run(ctx, &mcpserver.StdioTransport{In: in, Out: os.Stdout})
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
		logger.Error("dsh-lsp mcp: session ended", "error", err)
		return 1
	}
	return 0
}
