package main

import (
	"context"
	"embed"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dsh-lsp/dsh-lsp/completion"
	"github.com/dsh-lsp/dsh-lsp/diagnostics"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// demoStore is a small dsh session store in the real raw JSONL format
// (copies of fixture sessions: a titled chat, a compacted one, one with
// tool calls, a crashed one in another project, and one without cwd).
//
//go:embed all:demostore
var demoStore embed.FS

// demoCWD is the cwd of the demo's chat (the project of most samples).
const demoCWD = "/home/alice/proj"

// extractDemoStore writes the embedded store to a new temporary directory
// (mode 0700: private to the user), its files and subdirectories read-only,
// and returns it with a function that removes it.
func extractDemoStore() (string, func(), error) {
	dir, err := os.MkdirTemp("", "dsh-lsp-demo-")
	if err != nil {
		return "", nil, err
	}
	var dirs []string
	cleanup := func() {
		for _, d := range dirs {
			os.Chmod(d, 0o700)
		}
		os.RemoveAll(dir)
	}
	err = fs.WalkDir(demoStore, "demostore", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(path, "demostore")))
		if d.IsDir() {
			if dst != dir {
				dirs = append(dirs, dst)
			}
			return os.MkdirAll(dst, 0o700)
		}
		b, err := demoStore.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o400)
	})
	if err != nil {
		cleanup()
		return "", nil, err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		os.Chmod(dirs[i], 0o500)
	}
	return dir, cleanup, nil
}

// openDemoStore unpacks the sample store and indexes it like any other
// store; the returned function closes the index and removes the copy.
func openDemoStore() (*sessionstore.Indexed, func(), error) {
	root, cleanup, err := extractDemoStore()
	if err != nil {
		return nil, nil, fmt.Errorf("cannot unpack the sample store: %w", err)
	}
	ix, err := sessionstore.OpenIndexed(root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache, Snapshot: true})
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	closeAll := func() {
		ix.Close()
		cleanup()
	}
	if err := ix.Wait(context.Background()); err != nil {
		closeAll()
		return nil, nil, err
	}
	return ix, closeAll, nil
}

// demoMain prints a walkthrough of completion, diagnostics and prepare on
// the built-in sample store. A failure is reported like every subcommand's
// (CONTRACT §6: exit 1, error JSON on stdout, one line on stderr).
func demoMain(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		return cliMain(stdout, stderr, func() (any, error) {
			return nil, usageError("demo takes no arguments; got %q", args[0])
		})
	}
	if err := runDemo(stdout); err != nil {
		return cliMain(stdout, stderr, func() (any, error) { return nil, fmt.Errorf("demo: %w", err) })
	}
	return 0
}

// demoRule separates the walkthrough's sections.
var demoRule = strings.Repeat("─", 72)

func runDemo(w io.Writer) error {
	store, closeStore, err := openDemoStore()
	if err != nil {
		return err
	}
	defer closeStore()
	svc, err := reference.NewService(store, reference.DefaultConfig())
	if err != nil {
		return err
	}
	ctx := context.Background()
	cwd := demoCWD
	target := reference.Target{CWD: &cwd}
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }

	p("dsh-lsp demo: what an editor shows while you write a dsh prompt.\n")
	p("It uses a sample session store built into the binary (unpacked read-only to a temporary\ndirectory).\n")
	p("Your own ~/.dsh/sessions is not read.\n")
	p("Your chat runs in %s.\n\n", demoCWD)
	accepted, err := demoCompletion(ctx, svc, target, w)
	if err != nil {
		return err
	}
	if err := demoDiagnostics(ctx, store, target, w); err != nil {
		return err
	}
	if err := demoPrepare(ctx, svc, target, accepted, w); err != nil {
		return err
	}
	p("\nTry it on your own store:\n")
	p("    dsh-lsp candidates git            # sessions matching \"git\" (JSON)\n")
	p("    dsh-lsp prepare 'see @[x](dsh-session:…)'\n")
	p("    dsh-lsp check prompt.md           # FILE:LINE:COL diagnostics\n")
	p("and point your editor at `dsh-lsp` (LSP over stdio).\n")
	return nil
}

// demoCompletion shows the popup for "@" and "@git" and returns the prompt
// with the first "@git" item accepted.
func demoCompletion(ctx context.Context, svc *reference.Service, target reference.Target, w io.Writer) (string, error) {
	fmt.Fprintf(w, "%s\n1. Completion: type @ to cite another session\n%s\n\n", demoRule, demoRule)
	if _, err := demoComplete(ctx, svc, target, "Compare with @", w); err != nil {
		return "", err
	}
	fmt.Fprintf(w, "\nKeep typing to filter (id, cwd or title, case-insensitive):\n\n")
	cands, err := demoComplete(ctx, svc, target, "Compare with @git", w)
	if err != nil {
		return "", err
	}
	if len(cands) == 0 {
		return "", fmt.Errorf("the sample store has no session matching %q", "git")
	}
	label := cands[0].Label
	accepted := "Compare with " + reference.FormatMention(cands[0].SessionID, &label)
	fmt.Fprintf(w, "\nAccepting the first item turns @git into the mention:\n\n    %s\n\n", accepted)
	return accepted, nil
}

// demoDiagnostics shows the findings and quick fixes on a prompt with two
// broken mentions.
func demoDiagnostics(ctx context.Context, store reference.Source, target reference.Target, w io.Writer) error {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("%s\n2. Diagnostics: mistakes are flagged as you type\n%s\n\n", demoRule, demoRule)
	broken := "Also see @[old notes](dsh-session:InNyYyJ) and @[gone](dsh-session:ImdvbmUi)."
	p("    %s\n", broken)
	headers, err := store.ListSessions(ctx)
	if err != nil {
		return fmt.Errorf("list the sample sessions: %w", err)
	}
	findings := diagnostics.Check(broken, diagnostics.Env{Target: target, MaxReferences: 3, Known: diagnostics.KnownIDs(headers)})
	loc := diagnostics.NewLocator(broken)
	for _, f := range findings {
		line, col := loc.LineColumn(f.Span.Start)
		width := len([]rune(broken[f.Span.Start:f.Span.End]))
		p("    %s%s\n", strings.Repeat(" ", len([]rune(broken[:f.Span.Start]))), strings.Repeat("^", width))
		p("    line %d, column %d: %s: %s [%s]\n", line+1, col+1, f.Severity, f.Message, f.Code)
	}
	for _, fix := range diagnostics.Fixes(broken, 0, len(broken), nil) {
		if fix.Code != "" {
			p("    quick fix: %s\n", fix.Title)
		}
	}
	p("\nOther checks: self-reference (citing the chat itself), too-many-references\n")
	p("(more than %d distinct sessions), noncanonical-uri (a mangled bare URI).\n\n", reference.DefaultConfig().MaxReferences)
	return nil
}

// demoPrepare shows what prepare sends to the model for the accepted
// mention.
func demoPrepare(ctx context.Context, svc *reference.Service, target reference.Target, accepted string, w io.Writer) error {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("%s\n3. Prepare: what is sent to the model\n%s\n\n", demoRule, demoRule)
	final := accepted + " and tell me what we still have to do."
	p("Prompt:\n\n    %s\n\n", final)
	pt, err := svc.PrepareText(ctx, target, final)
	if err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	p("The message keeps a readable text (each mention becomes @label):\n\n    %s\n\n", pt.Content)
	if pt.ContextMessage == nil {
		return nil
	}
	refs := pt.ContextMessage.Source.References
	p("and dsh sends a separate context message (role \"user\", %d bytes of text) with a\n", len(pt.ContextMessage.Text))
	p("read-only snapshot of the cited session")
	if len(refs) == 1 {
		r := refs[0]
		p(" (%d messages, compacted: %v, truncated: %v)", r.OriginalMessages, r.Compacted, r.Truncated)
	}
	p(":\n\n")
	for _, line := range strings.Split(pt.ContextMessage.Text, "\n") {
		p("    │ %s\n", line)
	}
	return nil
}

// demoComplete shows the completion popup for the prompt (cursor at end).
func demoComplete(ctx context.Context, svc *reference.Service, target reference.Target, prompt string, w io.Writer) ([]reference.Candidate, error) {
	q, ok := completion.FindQuery(prompt, len(prompt))
	if !ok {
		return nil, fmt.Errorf("no mention query in %q", prompt)
	}
	cands, err := svc.ListCandidates(ctx, target, q.Text, svc.Config().CandidateLimit)
	if err != nil {
		return nil, err
	}
	items := completion.ItemsForText(cands, q, prompt)
	fmt.Fprintf(w, "    %s▏\n", prompt)
	width := 0
	for _, it := range items {
		if n := len([]rune(it.Label)); n > width {
			width = n
		}
	}
	if width > 40 {
		width = 40
	}
	for _, it := range items {
		label := []rune(it.Label)
		if len(label) > width {
			label = append(label[:width-1], '…')
		}
		fmt.Fprintf(w, "      │ %-*s  %s\n", width, string(label), it.Detail)
	}
	if len(items) == 0 {
		fmt.Fprintf(w, "      │ (no matching session)\n")
	}
	return cands, nil
}
