package lsp_test

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/dsh-lsp/dsh-lsp/lsp"
	"github.com/dsh-lsp/dsh-lsp/lsp/lsptest"
	"github.com/dsh-lsp/dsh-lsp/lsp/wire"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/storetest"
)

func complete(t *testing.T, s *session, uri string, pos protocol.Position) wire.CompletionList {
	t.Helper()
	var list wire.CompletionList
	trigger := "@"
	err := s.Call(context.Background(), "textDocument/completion", map[string]any{
		"textDocument": map[string]any{"uri": uri},
		"position":     pos,
		"context":      map[string]any{"triggerKind": 2, "triggerCharacter": trigger},
	}, &list)
	if err != nil {
		t.Fatalf("completion: %v", err)
	}
	return list
}

func TestCompletion(t *testing.T) {
	labelA := "Renaming git branches"
	mentionInLabel := reference.FormatMention(idA, ptr("a @b c"))
	tests := []struct {
		name string
		// text with "|" marking the cursor
		text string
		// wantFirst is the first item's label ("" = no items)
		wantFirst string
		// wantIDs, if set, are the expected session ids in order
		wantIDs []string
		// accept: the text after accepting the first item
		accept string
	}{
		{name: "line start", text: "@|", wantIDs: []string{idE, idC, idB, idA, idF, idG, idD},
			accept: reference.FormatMention(idE, ptr("What did we decide in"))},
		{name: "after paren", text: "see (@Ren|", wantFirst: labelA, accept: "see (" + reference.FormatMention(idA, &labelA)},
		{name: "after quote, second line", text: "x\n\"@ren|\"", wantFirst: labelA, accept: "x\n\"" + reference.FormatMention(idA, &labelA) + "\""},
		{name: "cwd match", text: "@bob|", wantIDs: []string{idG}},
		{name: "id match", text: "@2d51-4c8e-9f0a-5d3c2b1a0004|", wantIDs: []string{idD}},
		{name: "no match", text: "@zzzz|", wantIDs: []string{}},
		{name: "mid word", text: "mail@Ren|"},
		{name: "after bracket-less word", text: "see x@|"},
		{name: "space in query", text: "@Ren ing|"},
		{name: "inside mention label", text: strings.Replace(mentionInLabel, "@b", "@b|", 1)},
		{name: "multibyte before cursor", text: "héllo 🙂 世界 @Ren|", wantFirst: labelA,
			accept: "héllo 🙂 世界 " + reference.FormatMention(idA, &labelA)},
	}
	for _, enc := range []string{"utf-16", "utf-8", "utf-32"} {
		for _, tt := range tests {
			t.Run(enc+"/"+tt.name, func(t *testing.T) {
				s := startInit(t, nil, enc)
				if got := s.Encoding(); string(got) != enc {
					t.Fatalf("negotiated %q, want %q", got, enc)
				}
				cursor := strings.Index(tt.text, "|")
				text := strings.Replace(tt.text, "|", "", 1)
				uri := "file:///home/alice/proj/prompt.dsh"
				s.Open(uri, text)
				list := complete(t, s, uri, s.Pos(uri, cursor))
				if tt.wantFirst == "" && tt.wantIDs == nil {
					if len(list.Items) != 0 {
						t.Fatalf("want no items, got %d (first %q)", len(list.Items), list.Items[0].Label)
					}
					return
				}
				if tt.wantIDs != nil {
					var got []string
					for _, it := range list.Items {
						got = append(got, itemID(t, it))
					}
					if strings.Join(got, ",") != strings.Join(tt.wantIDs, ",") {
						t.Fatalf("ids = %v, want %v", got, tt.wantIDs)
					}
				}
				if tt.wantFirst != "" && (len(list.Items) == 0 || list.Items[0].Label != tt.wantFirst) {
					t.Fatalf("first item = %+v, want label %q", list.Items, tt.wantFirst)
				}
				if !list.IsIncomplete {
					t.Error("isIncomplete = false, want true")
				}
				query := text[strings.LastIndex(text[:cursor], "@")+1 : cursor]
				for i, it := range list.Items {
					if it.Kind != wire.CompletionItemKindReference || it.TextEdit == nil || it.InsertText != it.TextEdit.NewText ||
						!strings.HasPrefix(it.FilterText, query) || it.Detail == "" {
						t.Errorf("item %d malformed: %+v", i, it)
					}
					if i > 0 && it.SortText <= list.Items[i-1].SortText {
						t.Errorf("sortText not increasing at %d: %q after %q", i, it.SortText, list.Items[i-1].SortText)
					}
				}
				if tt.accept != "" {
					s.ApplyEdit(uri, *list.Items[0].TextEdit)
					if got := s.Text(uri); got != tt.accept {
						t.Errorf("after accepting:\n got %q\nwant %q", got, tt.accept)
					}
				}
			})
		}
	}
}

func itemID(t *testing.T, it wire.CompletionItem) string {
	t.Helper()
	// The inserted text is "[label](uri)": decode the uri.
	i := strings.LastIndex(it.InsertText, "](")
	id, err := reference.DecodeURI(strings.TrimSuffix(it.InsertText[i+2:], ")"))
	if err != nil {
		t.Fatalf("item %q: %v", it.InsertText, err)
	}
	return id
}

func ptr(s string) *string { return &s }

func TestCompletionAfterIncrementalTyping(t *testing.T) {
	s := startInit(t, nil, "utf-16")
	uri := "file:///p.dsh"
	s.Open(uri, "Über 🙂 ")
	s.Append(uri, "@")
	s.Append(uri, "Re")
	list := complete(t, s, uri, s.Pos(uri, len(s.Text(uri))))
	if len(list.Items) == 0 || list.Items[0].Label != "Renaming git branches" {
		t.Fatalf("items after typing @Re: %+v", list.Items)
	}
}

// TestCompletionSeesTheEditedMentions: the server keeps one mention scan
// per version of a document; an edit that puts the same cursor inside a
// mention must end completion there, and undoing it bring it back.
func TestCompletionSeesTheEditedMentions(t *testing.T) {
	s := startInit(t, nil, "utf-16")
	uri := "file:///p.dsh"
	s.Open(uri, "x @Ren")
	at := s.Pos(uri, len("x @Ren"))
	if list := complete(t, s, uri, at); len(list.Items) == 0 {
		t.Fatal("no items for @Ren")
	}
	if list := complete(t, s, uri, at); len(list.Items) == 0 {
		t.Fatal("no items for @Ren, asked again")
	}
	// "x @Ren" becomes the label of a mention: "@[x @Ren](dsh-session:…)".
	s.Replace(uri, 0, 0, "@[")
	s.Replace(uri, len("@[x @Ren"), len("@[x @Ren"), "]("+reference.EncodeURI(idA)+")")
	if list := complete(t, s, uri, s.Pos(uri, len("@[x @Ren"))); len(list.Items) != 0 {
		t.Fatalf("inside a mention after the edit: %d items, want none", len(list.Items))
	}
	s.Replace(uri, len("@[x @Ren"), len(s.Text(uri)), "")
	if list := complete(t, s, uri, s.Pos(uri, len("@[x @Ren"))); len(list.Items) == 0 {
		t.Fatal("no items once the mention is gone again")
	}
}

func TestCompletionResolve(t *testing.T) {
	s := startInit(t, nil)
	uri := "file:///p.dsh"
	s.Open(uri, "@Renaming")
	list := complete(t, s, uri, s.Pos(uri, len("@Renaming")))
	items := candidateItems(list.Items) // E's text mentions "Renaming" too
	if len(items) != 1 {
		t.Fatalf("want 1 candidate item, got %d", len(items))
	}
	var resolved wire.CompletionItem
	if err := s.Call(context.Background(), "completionItem/resolve", items[0], &resolved); err != nil {
		t.Fatal(err)
	}
	if resolved.Documentation == nil {
		t.Fatal("no documentation after resolve")
	}
	doc := resolved.Documentation.Value
	for _, want := range []string{idA, "/home/alice/proj", "messages: 4", "rename a local git branch", "2026-08-06"} {
		if !strings.Contains(doc, want) {
			t.Errorf("documentation lacks %q:\n%s", want, doc)
		}
	}
	if resolved.TextEdit == nil || resolved.TextEdit.NewText != list.Items[0].TextEdit.NewText {
		t.Errorf("resolve changed the edit: %+v", resolved.TextEdit)
	}
}

// TestCompletionALE initializes with Vim ALE 3.3's exact capabilities: the
// server uses byte columns and the ALE item shape.
func TestCompletionALE(t *testing.T) {
	s := start(t, lsp.Options{})
	f := false
	caps := map[string]any{
		"workspace": map[string]any{"applyEdit": f, "didChangeConfiguration": map[string]any{"dynamicRegistration": f},
			"symbol": map[string]any{"dynamicRegistration": f}, "workspaceFolders": f, "configuration": f},
		"textDocument": map[string]any{
			"completion": map[string]any{"dynamicRegistration": f, "contextSupport": f,
				"completionItem": map[string]any{"snippetSupport": f, "documentationFormat": []string{"plaintext"}}},
			"hover": map[string]any{"dynamicRegistration": f, "contentFormat": []string{"plaintext"}},
		},
	}
	var res protocol.InitializeResult
	if err := s.Call(context.Background(), "initialize", map[string]any{"processId": 1, "rootPath": "/home/alice/proj",
		"rootUri": "file:///home/alice/proj", "capabilities": caps, "initializationOptions": map[string]any{"sessionsDir": storeRaw}}, &res); err != nil {
		t.Fatal(err)
	}
	if res.Capabilities.PositionEncoding != "utf-8" {
		t.Fatalf("ALE: positionEncoding %q, want utf-8 (ALE counts bytes)", res.Capabilities.PositionEncoding)
	}
	s.Notify("initialized", map[string]any{})
	s.awaitIndexed(t)
	uri := "file:///home/alice/proj/p.dsh"
	text := "é @"
	s.Open(uri, text)
	var list wire.CompletionList
	if err := s.Call(context.Background(), "textDocument/completion", map[string]any{
		"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": 0, "character": len(text)}}, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) == 0 || list.Items[0].InsertText != "[What did we decide in]" || len(list.Items[0].AdditionalTextEdits) != 1 {
		t.Fatalf("ALE items: %+v", list.Items)
	}
	ae := list.Items[0].AdditionalTextEdits[0]
	if ae.Range.Start.Character != uint32(len(text)+len("[What did we decide in]")) || ae.NewText != "("+reference.EncodeURI(idE)+")" {
		t.Errorf("additional edit %+v", ae)
	}
}

func TestWorkspaceFolderTarget(t *testing.T) {
	s := startInit(t, nil) // first folder /home/alice/proj
	uri := "file:///p.dsh"
	s.Open(uri, "@")
	if list := complete(t, s, uri, s.Pos(uri, 1)); itemID(t, list.Items[0]) != idE {
		t.Fatalf("first item %q, want the newest /home/alice/proj session", list.Items[0].Label)
	}
	s.Notify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
		"added":   []any{map[string]any{"uri": "file:///home/bob/scratch", "name": "scratch"}},
		"removed": []any{map[string]any{"uri": "file:///home/alice/proj", "name": "proj"}},
	}})
	if list := complete(t, s, uri, s.Pos(uri, 1)); itemID(t, list.Items[0]) != idG {
		t.Errorf("after the folder change: first item %q, want the /home/bob/scratch session", list.Items[0].Label)
	}
}

// partialIndex is an index still in its first pass (until done is
// closed): Partial gives the sessions indexed so far; the Source it embeds
// is the whole store and counts the listings and title reads made before
// done (which read logs, so completion must not make them).
type partialIndex struct {
	lsp.Source
	listing   []reference.SessionHeader
	titles    map[string]reference.TitleResult
	done      chan struct{}
	earlyUses atomic.Int32
	// requestWaits counts Wait calls with a deadline (a request waiting
	// for the index; the server's own background waits have none).
	requestWaits atomic.Int32
}

func (p *partialIndex) Complete() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *partialIndex) Wait(ctx context.Context) error {
	if _, ok := ctx.Deadline(); ok {
		p.requestWaits.Add(1)
	}
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Catalog has no snapshot (a reference.Index may refuse): queries list
// and read titles, which the methods below count.
func (p *partialIndex) Catalog(context.Context) (*reference.Catalog, error) {
	return nil, reference.ErrCatalogUnavailable
}

func (p *partialIndex) Partial() ([]reference.SessionHeader, map[string]reference.TitleResult, bool) {
	return p.listing, p.titles, p.Complete()
}

func (p *partialIndex) ListSessions(ctx context.Context) ([]reference.SessionHeader, error) {
	if !p.Complete() {
		p.earlyUses.Add(1)
	}
	return p.Source.ListSessions(ctx)
}

func (p *partialIndex) ReadTitles(ctx context.Context, ids []string) ([]reference.TitleResult, error) {
	if !p.Complete() {
		p.earlyUses.Add(1)
	}
	return p.Source.ReadTitles(ctx, ids)
}

// newPartialIndex returns the fixture store behind an index that has
// indexed only the sessions ids so far.
func newPartialIndex(t *testing.T, ids ...string) *partialIndex {
	t.Helper()
	st, err := storetest.OpenSynced(storeRaw, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	all, err := st.ListSessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := &partialIndex{Source: st, titles: map[string]reference.TitleResult{}, done: make(chan struct{})}
	for _, h := range all { // newest first, like the real partial listing
		for _, id := range ids {
			if h.ID == id {
				p.listing = append(p.listing, h)
			}
		}
	}
	res, err := st.ReadTitles(ctx, ids)
	if err != nil || len(res) != len(ids) || len(p.listing) != len(ids) {
		t.Fatalf("fixture sessions %v: %d listed, titles %v, %v", ids, len(p.listing), res, err)
	}
	for _, r := range res {
		p.titles[r.SessionID] = r
	}
	return p
}

// completionIDs runs completion at the end of uri and returns the ids
// offered, in order, and isIncomplete. It fails the test rather than hang
// when the server waits for the index.
func completionIDs(t *testing.T, s *session, uri string) ([]string, bool) {
	t.Helper()
	got := make(chan wire.CompletionList, 1)
	go func() {
		var list wire.CompletionList
		_ = s.Call(context.Background(), "textDocument/completion", map[string]any{
			"textDocument": map[string]any{"uri": uri}, "position": s.Pos(uri, len(s.Text(uri)))}, &list)
		got <- list
	}()
	select {
	case list := <-got:
		var ids []string
		for _, it := range list.Items {
			ids = append(ids, itemID(t, it))
		}
		return ids, list.IsIncomplete
	case <-time.After(10 * time.Second):
		t.Fatal("completion did not answer while the index is incomplete (waiting for it?)")
		return nil, false
	}
}

// TestCompletionWhileIndexing: during the first indexing pass completion
// answers at once from what is indexed so far (marked incomplete, no log
// read), unknown-session is not reported, and when the pass ends the open
// documents are diagnosed again against the whole store.
func TestCompletionWhileIndexing(t *testing.T) {
	idx := newPartialIndex(t, idE, idC) // not idB ("Plan the migration of the")
	s := start(t, lsp.Options{OpenSource: func(string) (lsp.Source, error) { return idx, nil }})
	if _, err := s.Initialize(map[string]any{"sessionsDir": storeRaw}); err != nil {
		t.Fatal(err)
	}
	uri := "file:///p.dsh"
	missing := "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a00ff" // in no store
	s.Open(uri, "see @[gone]("+reference.EncodeURI(missing)+")\n@")
	// Not indexed yet is not unknown.
	s.Await(lsptest.DiagnosticCodes(uri))

	tests := []struct {
		typed string
		want  []string
	}{
		{"", []string{idE, idC}},
		{"the", []string{idC}}, // the full store also has idB
		{"decide", []string{idE}},
		{"migration", nil},
	}
	for _, tc := range tests {
		s.Replace(uri, strings.LastIndex(s.Text(uri), "@")+1, len(s.Text(uri)), tc.typed)
		ids, incomplete := completionIDs(t, s, uri)
		if !slices.Equal(ids, tc.want) || !incomplete {
			t.Errorf("while indexing, @%s: %v (isIncomplete %v), want %v from the partial index, incomplete", tc.typed, ids, incomplete, tc.want)
		}
	}
	if n := idx.requestWaits.Load(); n != 0 {
		t.Errorf("completion waited %d times for the index, want answers at once from the sessions indexed so far", n)
	}
	if n := idx.earlyUses.Load(); n != 0 {
		t.Errorf("%d listings or title reads of the store while indexing, want 0 (answer from the partial index)", n)
	}

	// The last edit's diagnostics are out (still without unknown-session):
	// the next publish can only come from the end of indexing.
	s.Await(lsptest.DiagnosticCodes(uri))
	close(idx.done)
	s.Await(lsptest.DiagnosticCodes(uri, "unknown-session"))
	s.Replace(uri, strings.LastIndex(s.Text(uri), "@")+1, len(s.Text(uri)), "the")
	if ids, _ := completionIDs(t, s, uri); !slices.Equal(ids, []string{idC, idB, idD}) {
		t.Errorf("after indexing, @the: %v, want %v", ids, []string{idC, idB, idD})
	}
}

// TestSettingsSwitchToStoreBeingIndexed: after the settings switch to a
// store still in its first pass, unknown-session waits for the whole
// listing, and open documents are diagnosed again when the pass ends.
func TestSettingsSwitchToStoreBeingIndexed(t *testing.T) {
	idx := newPartialIndex(t, idE)
	other := t.TempDir()
	s := start(t, lsp.Options{OpenSource: func(root string) (lsp.Source, error) {
		if root == other {
			return idx, nil
		}
		return storetest.OpenSynced(root, 0)
	}})
	if _, err := s.Initialize(map[string]any{"sessionsDir": storeRaw}); err != nil {
		t.Fatal(err)
	}
	uri := "file:///p.dsh"
	s.Open(uri, "see @[gone]("+reference.EncodeURI("0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a00ff")+")")
	s.Await(lsptest.DiagnosticCodes(uri, "unknown-session"))
	s.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"dsh": map[string]any{"sessionsDir": other}}})
	s.Await(lsptest.DiagnosticCodes(uri))
	close(idx.done)
	s.Await(lsptest.DiagnosticCodes(uri, "unknown-session"))
}
