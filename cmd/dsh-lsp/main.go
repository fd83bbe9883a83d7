// Command dsh-lsp is a language server that lets users cite other dsh
// (DeepSeek-Harness) chat sessions in a prompt with mentions
// `@[label](dsh-session:…)`, plus a command line for scripts.
//
// Usage:
//
//	dsh-lsp [serve] [--stdio] [--listen ADDR] [--sessions DIR] [--log-file F] [--log-level L]
//	dsh-lsp prepare [flags] [TEXT | -]
//	dsh-lsp candidates [flags] [--limit N] [--no-cache] [QUERY]
//	dsh-lsp search [flags] [--limit N] [--no-cache] [--no-content-index] QUERY
//	dsh-lsp mentions [TEXT | -]
//	dsh-lsp uri encode ID | uri decode URI
//	dsh-lsp check [flags] [--no-cache] FILE…
//	dsh-lsp mcp [flags]
//	dsh-lsp demo
//	dsh-lsp version
//
// Common flags: --sessions DIR, --target-id ID, --target-cwd DIR,
// --max-references N, --candidate-limit N, --max-reference-bytes N.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/dsh-lsp/dsh-lsp/internal/gcgoal"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = ""

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "0.1.0-dev"
}

func main() {
	tuneGC(os.Getenv, os.Args[1:])
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// gcPercent is the garbage the collector lets grow, as a share of the live
// heap, before it runs: Go's default, 100, doubles the memory of a process
// whose live heap is mostly the index of a large store. At 100,000
// sessions 50 took 18-24 % off the peak RSS of a first pass and of a
// served restart, for 0-15 % more CPU in a first pass; 35 took 12 MB
// (6 %) more off a served restart once the index was 116 MB, for half a
// point of idle CPU, and no change in a first pass at 10,000
// (bench/README.md, "What a session costs in memory").
const gcPercent = 35

// servingGCPercent is a server's target while it serves, that is while no
// bulk work (a large indexing pass, a content index build, loading a
// persisted index) runs, when it runs at gcPercent (internal/gcgoal). At
// 100,000 sessions a serving server keeps about 116 MB live and allocates
// little: 25 took its peak RSS from 196-199 to 188-191 MB, with new-query
// latencies alike (bench/README.md, "The collector's target by phase").
const servingGCPercent = 25

// tuneGC sets the collector's targets for the invocation args unless the
// user chose with GOGC: a server (serve, mcp) at servingGCPercent while it
// serves, any other command at gcPercent; both at gcPercent during bulk
// work, or more while the live heap is small (internal/gcgoal).
func tuneGC(getenv func(string) string, args []string) {
	if getenv("GOGC") != "" {
		return
	}
	idle := gcPercent
	if servesLong(args) {
		idle = servingGCPercent
	}
	gcgoal.Set(idle, gcPercent)
}

// servesLong reports whether args start a server (run's rules), which
// runs until its client leaves, rather than a one-shot command.
func servesLong(args []string) bool {
	if len(args) == 0 {
		return true
	}
	if isHelpFlag(args[0]) {
		return false
	}
	return strings.HasPrefix(args[0], "-") || args[0] == "serve" || args[0] == "mcp"
}

// run executes one invocation and returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && isHelpFlag(args[0]) {
		fmt.Fprint(stdout, usage)
		return 0
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return serveMain(args, stderr)
	}
	cmd, rest := args[0], args[1:]
	if c, ok := commands[cmd]; ok {
		return c(rest, stdin, stdout, stderr)
	}
	return cliMain(stdout, stderr, func() (any, error) {
		return nil, usageError("unknown command %q (try dsh-lsp help)", cmd)
	})
}

func isHelpFlag(arg string) bool { return arg == "-h" || arg == "--help" || arg == "-help" }

// command runs one subcommand with the arguments after its name and
// returns the exit code.
type command func(rest []string, stdin io.Reader, stdout, stderr io.Writer) int

// commands are the subcommands by name; a first argument that is a flag
// (or none) means serve.
var commands = map[string]command{
	"serve": func(rest []string, _ io.Reader, _, stderr io.Writer) int { return serveMain(rest, stderr) },
	"prepare": answers(func(rest []string, stdin io.Reader, _ io.Writer) (any, error) {
		return prepareCmd(rest, stdin)
	}),
	"candidates": answers(func(rest []string, _ io.Reader, stderr io.Writer) (any, error) {
		return candidatesCmd(rest, stderr)
	}),
	"search": answers(func(rest []string, _ io.Reader, _ io.Writer) (any, error) { return searchCmd(rest) }),
	"mentions": answers(func(rest []string, stdin io.Reader, _ io.Writer) (any, error) {
		return mentionsCmd(rest, stdin)
	}),
	"uri": answers(func(rest []string, _ io.Reader, _ io.Writer) (any, error) { return uriCmd(rest) }),
	"check": func(rest []string, _ io.Reader, stdout, stderr io.Writer) int {
		return checkMain(rest, stdout, stderr)
	},
	"mcp": func(rest []string, _ io.Reader, stdout, stderr io.Writer) int {
		return mcpMain(rest, stdout, stderr)
	},
	"demo": func(rest []string, _ io.Reader, stdout, stderr io.Writer) int {
		return demoMain(rest, stdout, stderr)
	},
	"version": answers(func([]string, io.Reader, io.Writer) (any, error) {
		return map[string]string{"name": "dsh-lsp", "version": versionString()}, nil
	}),
	"help": func(_ []string, _ io.Reader, stdout, _ io.Writer) int {
		fmt.Fprint(stdout, usage)
		return 0
	},
}

// answers makes a command of one that answers a single JSON value (or an
// error), which cliMain prints.
func answers(f func(rest []string, stdin io.Reader, stderr io.Writer) (any, error)) command {
	return func(rest []string, stdin io.Reader, stdout, stderr io.Writer) int {
		return cliMain(stdout, stderr, func() (any, error) { return f(rest, stdin, stderr) })
	}
}

const usage = `dsh-lsp: cite dsh sessions in prompts with @[label](dsh-session:…) mentions

  dsh-lsp [serve] [--stdio] [--listen 127.0.0.1:PORT] [--sessions DIR]
          [--log-file FILE] [--log-level debug|info|warn|error]
                                       LSP server over stdio (or TCP)
  dsh-lsp prepare [flags] [TEXT | -]   readable text + context message (JSON)
  dsh-lsp candidates [flags] [--limit N] [--no-cache] [QUERY]
                                       sessions a mention can cite (JSON)
  dsh-lsp search [flags] [--limit N] [--no-cache] QUERY
                                       sessions by what was said in them (JSON)
  dsh-lsp mentions [TEXT | -]          mentions found in TEXT (JSON)
  dsh-lsp uri encode ID | decode URI   session reference URIs (JSON)
  dsh-lsp check [flags] [--no-cache] FILE…
                                       FILE:LINE:COL: severity: message [code]
  dsh-lsp mcp [flags]                  MCP server over stdio for AI agents
  dsh-lsp demo                         walkthrough on a built-in sample store
  dsh-lsp version

Common flags: --sessions DIR (default $DSH_HOME/sessions or ~/.dsh/sessions),
  --target-id ID (the chat's own session), --target-cwd DIR (default: the
  current directory), --max-references N (1..3, default 3), --candidate-limit N
  (default 50), --max-reference-bytes N (default 65536), --max-read-mb N (the
  most one session read may hold; default $DSH_LSP_READ_LIMIT_MB or 128)
candidates and check answer from the session index cached in the user cache
  directory (as the server does), after checking it against the store;
  --no-cache indexes the store in memory, neither reading nor writing the
  cache. prepare parses only the sessions it cites.
search keeps a content index (what a mention would send, and the title)
  beside it; --no-cache keeps both in memory for the run. serve and mcp take
  --no-content-index (content search off: no content index built or kept).
`
