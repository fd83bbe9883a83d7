package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/dsh-lsp/dsh-lsp/diagnostics"
	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// cliError is a failure reported as {"error":{"code","message"}}.
type cliError struct {
	Code    reference.Code `json:"code"`
	Message string         `json:"message"`
}

func (e *cliError) Error() string { return e.Message }

// usageError is a command-line mistake; dsh has no usage code, so it is
// reported as an invalid configuration.
func usageError(format string, args ...any) error {
	return &cliError{Code: reference.CodeInvalidConfig, Message: fmt.Sprintf(format, args...)}
}

// toCLIError maps any error to its dsh code.
func toCLIError(err error) *cliError {
	var ce *cliError
	if errors.As(err, &ce) {
		return ce
	}
	code := reference.CodeOf(err)
	if code == "" {
		code = reference.CodeReadFailed
	}
	return &cliError{Code: code, Message: err.Error()}
}

// writeJSON prints v as JSON (jsjson.Marshal: no HTML escaping) and a
// newline.
func writeJSON(w io.Writer, v any) error {
	b, err := jsjson.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// cliMain runs f and prints its JSON result, or the error JSON on stdout
// plus a one-line message on stderr (exit 1).
func cliMain(stdout, stderr io.Writer, f func() (any, error)) int {
	v, err := f()
	if err == nil {
		if raw, ok := v.(json.RawMessage); ok {
			stdout.Write(append(raw, '\n'))
			return 0
		}
		if err = writeJSON(stdout, v); err == nil {
			return 0
		}
	}
	ce := toCLIError(err)
	writeJSON(stdout, map[string]*cliError{"error": ce})
	fmt.Fprintf(stderr, "dsh-lsp: %s: %s\n", ce.Code, oneLine(ce.Message))
	return 1
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// common holds the common flags.
type common struct {
	sessions, targetID, targetCWD              string
	maxReferences, candidateLimit, maxRefBytes string
	maxReadMB                                  int64
	fs                                         *flag.FlagSet
}

func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

func (c *common) register(fs *flag.FlagSet) {
	c.fs = fs
	fs.StringVar(&c.sessions, "sessions", "", "session store root")
	fs.StringVar(&c.targetID, "target-id", "", "the preparing chat's own session id")
	fs.StringVar(&c.targetCWD, "target-cwd", "", "the preparing chat's cwd (default: the current directory)")
	fs.StringVar(&c.maxReferences, "max-references", "", "maxReferences (1..3)")
	fs.StringVar(&c.candidateLimit, "candidate-limit", "", "candidateLimit")
	fs.StringVar(&c.maxRefBytes, "max-reference-bytes", "", "maxReferenceBytes")
	fs.Int64Var(&c.maxReadMB, "max-read-mb", 0, "read limit in MiB: the most one session read may hold (default $DSH_LSP_READ_LIMIT_MB or 128)")
}

// parseInterleaved parses flags that may come before or after positional
// arguments; "--" ends flags.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, usageError("%s: %v", fs.Name(), err)
		}
		rest := fs.Args()
		// Did Parse stop at "--"?
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// config builds the reference config from the flags with dsh's checks.
func (c *common) config() (reference.Config, error) {
	obj := map[string]json.RawMessage{}
	for _, f := range []struct{ key, val, flag string }{
		{"maxReferences", c.maxReferences, "max-references"},
		{"candidateLimit", c.candidateLimit, "candidate-limit"},
		{"maxReferenceBytes", c.maxRefBytes, "max-reference-bytes"},
	} {
		if !c.isSet(f.flag) {
			continue
		}
		if _, err := strconv.ParseFloat(f.val, 64); err == nil && json.Valid([]byte(f.val)) {
			obj[f.key] = json.RawMessage(f.val)
		} else {
			b, _ := json.Marshal(f.val) // a string: refused by the core with dsh's message
			obj[f.key] = b
		}
	}
	raw, _ := json.Marshal(obj)
	return reference.ConfigFromJSON(raw)
}

func (c *common) isSet(name string) bool {
	set := false
	c.fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

// target builds the target from --target-id/--target-cwd; the cwd defaults
// to the current directory (as a dsh agent's cwd would).
func (c *common) target() reference.Target {
	var t reference.Target
	if c.isSet("target-id") {
		id := c.targetID
		t.SessionID = &id
	}
	if c.isSet("target-cwd") {
		cwd := c.targetCWD
		t.CWD = &cwd
	} else if wd, err := os.Getwd(); err == nil {
		t.CWD = &wd
	}
	return t
}

// service opens the store for reads of a few sessions by id (prepare): a
// lazy index, which parses only the sessions read and keeps no cache.
func (c *common) service() (*reference.Service, reference.Source, func(), error) {
	return c.openService(sessionstore.IndexOptions{Lazy: true}, os.Stderr)
}

// openService opens the store behind an index with opts and the service
// over it; close releases the index (and persists it, when cached). While
// the first pass parses transcripts, a progress line is drawn on stderr
// when it is a terminal (nothing otherwise).
func (c *common) openService(opts sessionstore.IndexOptions, stderr io.Writer) (*reference.Service, reference.Source, func(), error) {
	cfg, err := c.config()
	if err != nil {
		return nil, nil, nil, err
	}
	root, err := sessionstore.ResolveRoot(c.sessions)
	if err != nil {
		return nil, nil, nil, &cliError{Code: reference.CodeReadFailed, Message: "cannot resolve the session store root: " + err.Error()}
	}
	progress := newProgressLine(stderr)
	defer progress.finish()
	opts.ReadLimit = c.readLimit()
	opts.Progress = progress.report
	opts.Logf = func(format string, args ...any) {
		progress.println(stderr, "dsh-lsp: warning: "+oneLine(fmt.Sprintf(format, args...)))
	}
	x, err := sessionstore.OpenIndexed(root, opts)
	if err != nil {
		return nil, nil, nil, &cliError{Code: reference.CodeReadFailed, Message: fmt.Sprintf("cannot open session store %q: %v", root, err)}
	}
	// Without a cache the first pass indexes everything: wait for it, so
	// the answer covers the whole store (not what is indexed so far). A
	// loaded cache answers as the index revalidates it (a completion
	// early, other queries after its first refresh).
	if !x.Complete() {
		if err := x.Wait(context.Background()); err != nil {
			x.Close()
			return nil, nil, nil, err
		}
	}
	// Sessions are listed whatever their directory's encoding; a
	// transcript that is not read (its directory's other one is) is said.
	for _, skipped := range x.Skipped() {
		progress.println(stderr, "dsh-lsp: warning: "+oneLine(skipped.Error()))
	}
	svc, err := reference.NewService(x, cfg)
	if err != nil {
		x.Close()
		return nil, nil, nil, err
	}
	return svc, x, func() { x.Close() }, nil
}

// readLimit is --max-read-mb in bytes (0: the store's default).
func (c *common) readLimit() int64 { return max(c.maxReadMB, 0) << 20 }

// indexedService opens the store behind the session index persisted in
// the user cache directory (the server's, so either one's work helps the
// other): a later run answers from it after stat-checking every entry and
// re-parsing only what changed, instead of reading every log. noCache
// indexes the store in memory only. close persists the index.
func (c *common) indexedService(noCache bool, stderr io.Writer) (svc *reference.Service, src reference.Source, close func(), err error) {
	opts := sessionstore.IndexOptions{
		// One answer, then exit: the first refresh (a stat scan of the
		// whole store) is all the revalidation it needs.
		Snapshot: true,
	}
	if noCache {
		opts.CacheDir = sessionstore.NoCache
	}
	return c.openService(opts, stderr)
}

// registerNoCache adds --no-cache (index the store in memory, neither
// using nor writing the index cache).
func registerNoCache(fs *flag.FlagSet) *bool {
	return fs.Bool("no-cache", false, "neither use nor write the session index cache")
}

// readText returns the TEXT argument, or stdin for "-" or no argument.
func readText(args []string, stdin io.Reader, cmd string) (string, error) {
	switch {
	case len(args) > 1:
		return "", usageError("%s takes one TEXT argument (quote it, or use - for stdin); got %d", cmd, len(args))
	case len(args) == 1 && args[0] != "-":
		return args[0], nil
	}
	b, err := io.ReadAll(stdin)
	if err != nil {
		return "", &cliError{Code: reference.CodeReadFailed, Message: "cannot read stdin: " + err.Error()}
	}
	return string(b), nil
}

func prepareCmd(args []string, stdin io.Reader) (any, error) {
	var c common
	fs := newFlagSet("prepare")
	c.register(fs)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return nil, err
	}
	text, err := readText(pos, stdin, "prepare")
	if err != nil {
		return nil, err
	}
	svc, _, closeSrc, err := c.service()
	if err != nil {
		return nil, err
	}
	defer closeSrc()
	pt, err := svc.PrepareText(context.Background(), c.target(), text)
	if err != nil {
		return nil, err
	}
	b, err := reference.MarshalPrepared(pt)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(b), nil
}

func candidatesCmd(args []string, stderr io.Writer) (any, error) {
	var c common
	fs := newFlagSet("candidates")
	c.register(fs)
	limitStr := fs.String("limit", "", "maximum number of candidates (default: --candidate-limit)")
	noCache := registerNoCache(fs)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return nil, err
	}
	if len(pos) > 1 {
		return nil, usageError("candidates takes at most one QUERY argument; got %d", len(pos))
	}
	query := ""
	if len(pos) == 1 {
		query = pos[0]
	}
	svc, _, closeSrc, err := c.indexedService(*noCache, stderr)
	if err != nil {
		return nil, err
	}
	defer closeSrc()
	limit := svc.Config().CandidateLimit
	if c.isSet("limit") {
		v, perr := strconv.ParseFloat(*limitStr, 64)
		if perr != nil {
			v = 0.5 // not a number: refused below with dsh's message
		}
		if limit, err = reference.CheckCandidateLimit(v); err != nil {
			return nil, err
		}
	}
	cands, err := svc.ListCandidates(context.Background(), c.target(), query, limit)
	if err != nil {
		return nil, err
	}
	return reference.CandidateItems(cands), nil
}

func mentionsCmd(args []string, stdin io.Reader) (any, error) {
	fs := newFlagSet("mentions")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return nil, err
	}
	text, err := readText(pos, stdin, "mentions")
	if err != nil {
		return nil, err
	}
	res, err := reference.ParseText(text)
	if err != nil {
		return nil, err
	}
	if res.References == nil {
		res.References = []reference.ParsedReference{}
	}
	return res, nil
}

func uriCmd(args []string) (any, error) {
	if len(args) != 2 {
		return nil, usageError("usage: dsh-lsp uri encode ID | dsh-lsp uri decode URI")
	}
	switch args[0] {
	case "encode":
		return map[string]string{"uri": reference.EncodeURI(args[1])}, nil
	case "decode":
		id, err := reference.DecodeURI(args[1])
		if err != nil {
			return nil, err
		}
		return map[string]reference.JSString{"sessionId": reference.JSString(id)}, nil
	}
	return nil, usageError("unknown uri subcommand %q (want encode or decode)", args[0])
}

// checkMain prints FILE:LINE:COL: severity: message [code] per finding and
// exits 1 if any finding is an error.
func checkMain(args []string, stdout, stderr io.Writer) int {
	var c common
	fs := newFlagSet("check")
	c.register(fs)
	noCache := registerNoCache(fs)
	files, err := parseInterleaved(fs, args)
	if err == nil && len(files) == 0 {
		err = usageError("check needs at least one FILE")
	}
	var cfg reference.Config
	var src reference.Source
	if err == nil {
		var svc *reference.Service
		var closeSrc func()
		svc, src, closeSrc, err = c.indexedService(*noCache, stderr)
		if svc != nil {
			cfg = svc.Config()
			defer closeSrc()
		}
	}
	if err != nil {
		return cliMain(stdout, stderr, func() (any, error) { return nil, err })
	}
	env := diagnostics.Env{Target: c.target(), MaxReferences: cfg.MaxReferences}
	if headers, lerr := src.ListSessions(context.Background()); lerr == nil {
		env.Known = diagnostics.KnownIDs(headers)
	} else {
		fmt.Fprintf(stderr, "dsh-lsp: warning: cannot list sessions (unknown-session not checked): %v\n", lerr)
	}
	var out bytes.Buffer
	failed := false
	for _, file := range files {
		b, rerr := os.ReadFile(file)
		if rerr != nil {
			return cliMain(stdout, stderr, func() (any, error) {
				return nil, &cliError{Code: reference.CodeReadFailed, Message: fmt.Sprintf("cannot read %s: %v", file, rerr)}
			})
		}
		text := string(b)
		loc := diagnostics.NewLocator(text)
		for _, f := range diagnostics.Check(text, env) {
			line, col := loc.LineColumn(f.Span.Start)
			fmt.Fprintf(&out, "%s:%d:%d: %s: %s [%s]\n", file, line+1, col+1, f.Severity, oneLine(f.Message), f.Code)
			if f.Severity == diagnostics.Error {
				failed = true
			}
		}
	}
	stdout.Write(out.Bytes())
	if failed {
		return 1
	}
	return 0
}
