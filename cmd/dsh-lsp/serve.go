package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/pprof"
	"sync"
	"syscall"

	"go.lsp.dev/jsonrpc2"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"
	"go.uber.org/zap/zapcore"

	"github.com/dsh-lsp/dsh-lsp/lsp"
)

// serveMain runs the language server and returns the process exit code.
func serveMain(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("dsh-lsp serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Bool("stdio", true, "speak LSP over stdin/stdout (the default; accepted for vscode-languageclient)")
	listen := fs.String("listen", "", "serve LSP over TCP on this address (e.g. 127.0.0.1:7777) instead of stdio")
	sessions := fs.String("sessions", "", "session store root (default $DSH_HOME/sessions or ~/.dsh/sessions)")
	logFile := fs.String("log-file", "", "write logs to this file instead of stderr")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	noContent := fs.Bool("no-content-index", false, "content search off whatever the contentSearch setting says: no content index is built or kept")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file, for developers (as gopls -profile.cpu)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "dsh-lsp serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	logger, closeLog, err := newLogger(*logFile, *logLevel, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "dsh-lsp: %v\n", err)
		return 2
	}
	defer closeLog()
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "dsh-lsp: %v\n", err)
			return 2
		}
		defer stop()
	}

	// A client that goes away while we write would otherwise kill the
	// process with SIGPIPE (Go's default for fd 1); the write error ends
	// the session cleanly instead (exit code 1).
	signal.Ignore(syscall.SIGPIPE)

	opts := lsp.Options{Logger: logger, SessionsDir: *sessions, Version: versionString(), NoContentIndex: *noContent}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if *listen != "" {
		return serveTCP(ctx, *listen, opts, logger, stderr)
	}
	logger.Info("dsh-lsp serving on stdio", "version", opts.Version, "pid", os.Getpid())
	stream := jsonrpc2.NewHeaderStream(newStdio())
	code := lsp.New(opts).Serve(ctx, stream)
	logger.Info("dsh-lsp exiting", "code", code)
	return code
}

// startCPUProfile profiles the process into the file path until stop.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// stdio is stdin+stdout as one connection. Closing it closes stdin, which
// must unblock the pending read so the server can finish right after exit
// even though the client keeps its end of the pipe open.
type stdio struct{ in *os.File }

func (s stdio) Read(p []byte) (int, error) { return s.in.Read(p) }
func (stdio) Write(p []byte) (int, error)  { return os.Stdout.Write(p) }
func (s stdio) Close() error               { return s.in.Close() }

// serveTCP accepts LSP clients on addr, one server session per connection,
// until interrupted.
func serveTCP(ctx context.Context, addr string, opts lsp.Options, logger *slog.Logger, stderr io.Writer) int {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(stderr, "dsh-lsp: cannot listen on %s: %v\n", addr, err)
		return 1
	}
	logger.Info("dsh-lsp listening", "addr", ln.Addr().String())
	fmt.Fprintf(stderr, "dsh-lsp listening on %s\n", ln.Addr())
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	var wg sync.WaitGroup
	for {
		c, err := ln.Accept()
		if err != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			logger.Info("client connected", "remote", c.RemoteAddr().String())
			code := lsp.New(opts).Serve(ctx, jsonrpc2.NewHeaderStream(c))
			logger.Info("client session ended", "remote", c.RemoteAddr().String(), "code", code)
		}()
	}
	wg.Wait()
	return 0
}

// newLogger builds the *slog.Logger the server, the MCP server and
// go.lsp.dev/protocol log through: zap writing to file (or w) at level.
// zapslog keeps slog attributes and groups as structured zap fields.
func newLogger(file, level string, w io.Writer) (*slog.Logger, func(), error) {
	zl, closeLog, err := newZapLogger(file, level, w)
	if err != nil {
		return nil, nil, err
	}
	return slog.New(zapslog.NewHandler(zl.Core())), closeLog, nil
}

// newZapLogger builds a zap logger writing to file (or w) at level.
func newZapLogger(file, level string, w io.Writer) (*zap.Logger, func(), error) {
	// zap would also take dpanic, panic and fatal (and upper case); the
	// flag documents four levels, so accept exactly those.
	lvl, ok := map[string]zapcore.Level{
		"debug": zapcore.DebugLevel, "info": zapcore.InfoLevel, "warn": zapcore.WarnLevel, "error": zapcore.ErrorLevel,
	}[level]
	if !ok {
		return nil, nil, fmt.Errorf("invalid --log-level %q (want debug, info, warn or error)", level)
	}
	sink := zapcore.AddSync(w)
	closeFn := func() {}
	if file != "" {
		f, err := os.OpenFile(file, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, nil, fmt.Errorf("cannot open --log-file: %w", err)
		}
		sink = zapcore.AddSync(f)
		closeFn = func() { f.Close() }
	}
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.Lock(sink), lvl)
	zl := zap.New(core)
	return zl, func() { _ = zl.Sync(); closeFn() }, nil
}
