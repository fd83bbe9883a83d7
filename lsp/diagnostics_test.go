package lsp_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/dsh-lsp/dsh-lsp/diagnostics"
	"github.com/dsh-lsp/dsh-lsp/lsp"
	"github.com/dsh-lsp/dsh-lsp/lsp/lsptest"
	"github.com/dsh-lsp/dsh-lsp/lsp/wire"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

func TestDiagnosticsAppearAndDisappear(t *testing.T) {
	for _, enc := range []string{"utf-16", "utf-8", "utf-32"} {
		t.Run(enc, func(t *testing.T) {
			s := startInit(t, map[string]any{"sessionsDir": storeRaw, "maxReferences": 2, "target": map[string]any{"sessionId": idB}}, enc)
			uri := "file:///home/alice/proj/prompt.dsh"
			good := reference.FormatMention(idA, ptr("Renaming"))
			s.Open(uri, "héllo 🙂 "+good)
			s.Await(lsptest.DiagnosticCodes(uri))

			// A broken explicit mention → invalid-uri; fixing it clears it.
			s.Append(uri, " @[bad](dsh-session:not-canonical)")
			s.Await(lsptest.DiagnosticCodes(uri, diagnostics.CodeInvalidURI))
			d, _ := s.Diagnostics(uri)
			text := s.Text(uri)
			start := strings.Index(text, "@[bad]")
			if got, want := d.Diagnostics[0].Range.Start, s.Pos(uri, start); got != want {
				t.Errorf("invalid-uri starts at %v, want %v", got, want)
			}
			if d.Diagnostics[0].Severity != wire.SeverityError {
				t.Errorf("invalid-uri severity %d", d.Diagnostics[0].Severity)
			}
			s.Replace(uri, strings.Index(text, " @[bad]"), len(text), "")
			s.Await(lsptest.DiagnosticCodes(uri))

			// Bare noncanonical payload (non-zero trailing bits) → noncanonical-uri.
			n := len(s.Text(uri))
			s.Append(uri, " dsh-session:InNyYyJ")
			s.Await(lsptest.DiagnosticCodes(uri, diagnostics.CodeNoncanonicalURI))
			s.Replace(uri, n, len(s.Text(uri)), "")
			s.Await(lsptest.DiagnosticCodes(uri))

			// Ordinary discussion: no diagnostic.
			s.Append(uri, " what is a dsh-session: URI? see dsh-session:%%% and https://x")
			s.Await(lsptest.DiagnosticCodes(uri))

			// Unknown session (warning), self reference, too many.
			s.Append(uri, " "+reference.FormatMention("no-such-session", nil))
			s.Await(lsptest.DiagnosticCodes(uri, diagnostics.CodeUnknownSession))
			d, _ = s.Diagnostics(uri)
			if d.Diagnostics[0].Severity != wire.SeverityWarning {
				t.Errorf("unknown-session severity %d, want warning", d.Diagnostics[0].Severity)
			}
			s.Append(uri, " "+reference.FormatMention(idB, nil))
			s.Await(lsptest.DiagnosticCodes(uri, diagnostics.CodeUnknownSession, diagnostics.CodeSelfReference))
			s.Append(uri, " "+reference.FormatMention(idD, nil)+" "+reference.FormatMention(idD, ptr("again")))
			s.Await(lsptest.DiagnosticCodes(uri, diagnostics.CodeUnknownSession, diagnostics.CodeSelfReference,
				diagnostics.CodeTooManyReferences, diagnostics.CodeTooManyReferences))

			// Back to the good text: everything clears.
			s.Replace(uri, 0, len(s.Text(uri)), good)
			s.Await(lsptest.DiagnosticCodes(uri))
		})
	}
}

func TestCodeActions(t *testing.T) {
	s := startInit(t, nil)
	uri := "file:///p.dsh"
	bareA := reference.EncodeURI(idA)
	tests := []struct {
		name  string
		text  string
		at    string // the fix applies to the first occurrence of this
		title string
		want  string
	}{
		{"canonical", "see @[x](" + bareA + "=) ok", bareA, diagnostics.TitleCanonical, "see @[x](" + bareA + ") ok"},
		{"bare to mention", "see " + bareA + " ok", bareA, diagnostics.TitleConvert,
			"see " + reference.FormatMention(idA, ptr("Renaming git branches")) + " ok"},
		{"remove duplicate", "a " + reference.FormatMention(idA, nil) + " b " + reference.FormatMention(idA, ptr("x")) + " c",
			"@[x]", diagnostics.TitleRemoveDup, "a " + reference.FormatMention(idA, nil) + " b c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.Open(uri, tt.text)
			off := strings.Index(tt.text, tt.at)
			if tt.name == "remove duplicate" {
				off = strings.LastIndex(tt.text, tt.at)
			}
			var actions []wire.CodeAction
			err := s.Call(context.Background(), "textDocument/codeAction", map[string]any{
				"textDocument": map[string]any{"uri": uri},
				"range":        protocol.Range{Start: s.Pos(uri, off+1), End: s.Pos(uri, off+1)},
				"context":      map[string]any{"diagnostics": []any{}},
			}, &actions)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range actions {
				if strings.HasPrefix(a.Title, tt.title) {
					for _, te := range a.Edit.Changes[uri] {
						s.ApplyEdit(uri, te)
					}
					if got := s.Text(uri); got != tt.want {
						t.Errorf("after %q:\n got %q\nwant %q", a.Title, got, tt.want)
					}
					return
				}
			}
			t.Fatalf("no %q action among %+v", tt.title, actions)
		})
	}
}

func TestHover(t *testing.T) {
	s := startInit(t, map[string]any{"sessionsDir": storeRaw, "maxReferenceBytes": 700})
	uri := "file:///p.dsh"
	text := "see " + reference.FormatMention(idB, ptr("plan")) + " now"
	s.Open(uri, text)
	var h wire.Hover
	if err := s.Call(context.Background(), "textDocument/hover", map[string]any{
		"textDocument": map[string]any{"uri": uri}, "position": s.Pos(uri, 6)}, &h); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Plan the migration of the", idB, "/home/alice/proj", "compacted: yes", "of the 700-byte budget"} {
		if !strings.Contains(h.Contents.Value, want) {
			t.Errorf("hover lacks %q:\n%s", want, h.Contents.Value)
		}
	}
	var none *wire.Hover
	if err := s.Call(context.Background(), "textDocument/hover", map[string]any{
		"textDocument": map[string]any{"uri": uri}, "position": s.Pos(uri, 1)}, &none); err != nil || none != nil {
		t.Errorf("hover outside a mention: %v, %+v", err, none)
	}
}

func TestSetTarget(t *testing.T) {
	s := startInit(t, nil)
	uri := "file:///chat.dsh"
	// dsh/setTarget may come before didOpen.
	s.Notify("dsh/setTarget", map[string]any{"textDocument": map[string]any{"uri": uri},
		"target": map[string]any{"sessionId": idA, "cwd": "/home/bob/scratch"}})
	s.Open(uri, "see "+reference.FormatMention(idA, nil)+" @")
	s.Await(lsptest.DiagnosticCodes(uri, diagnostics.CodeSelfReference))
	list := complete(t, s, uri, s.Pos(uri, len(s.Text(uri))))
	if len(list.Items) != 6 || itemID(t, list.Items[0]) != idG {
		t.Errorf("with target {A, /home/bob/scratch}: %d items, first %q", len(list.Items), list.Items[0].Label)
	}
	for _, it := range list.Items {
		if itemID(t, it) == idA {
			t.Error("the target session is offered")
		}
	}
	// Clearing the document target falls back to the settings/workspace.
	s.Notify("dsh/setTarget", map[string]any{"textDocument": map[string]any{"uri": uri}, "target": nil})
	s.Append(uri, " ")
	s.Await(lsptest.DiagnosticCodes(uri))
}

// countingSource counts ReadSurface calls; it hides the index's
// SurfaceSummary, so every hover reads.
type countingSource struct {
	lsp.Source
	reads atomic.Int32
}

func (c *countingSource) SurfaceSummary(context.Context, string) (*reference.SurfaceSummary, bool) {
	return nil, false
}

func (c *countingSource) ReadSurface(ctx context.Context, id string) (*reference.Surface, error) {
	c.reads.Add(1)
	return c.Source.ReadSurface(ctx, id)
}

// TestHoverReadsTheSessionOnce: the hover's header facts and its prompt
// size come from one read of the session log.
func TestHoverReadsTheSessionOnce(t *testing.T) {
	cs := &countingSource{}
	s := startOver(t, func(st lsp.Source) lsp.Source { cs.Source = st; return cs })
	uri := "file:///once.dsh"
	s.Open(uri, "see "+reference.FormatMention(idB, ptr("plan")))
	before := cs.reads.Load()
	var h wire.Hover
	if err := s.Call(context.Background(), "textDocument/hover", map[string]any{
		"textDocument": map[string]any{"uri": uri}, "position": s.Pos(uri, 6)}, &h); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.Contents.Value, "-byte budget") {
		t.Fatalf("hover lacks the prompt size:\n%s", h.Contents.Value)
	}
	if n := cs.reads.Load() - before; n != 1 {
		t.Errorf("hover read the session %d times, want 1", n)
	}
}
