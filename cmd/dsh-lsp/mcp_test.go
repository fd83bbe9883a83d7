package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-lsp/dsh-lsp/mcpserver"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// mcpTargetCWD is the target cwd of both the MCP server and the CLI runs
// it is compared with: the fixtures' /home/alice/proj sessions rank first.
const mcpTargetCWD = "/home/alice/proj"

// connectMCP serves root through mcpserver over the SDK's in-memory
// transport and connects an SDK client with the legacy initialize
// handshake (protocol 2025-11-25, what today's agents speak).
func connectMCP(t *testing.T, root string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	idx, err := sessionstore.OpenIndexed(root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	cwd := mcpTargetCWD
	srv, err := mcpserver.New(mcpserver.Options{Source: idx, Target: reference.Target{CWD: &cwd}, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, st) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("the MCP server did not stop")
		}
	})
	client := mcp.NewClient(&mcp.Implementation{Name: "dsh-lsp-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// cliJSON runs the CLI against root with the MCP server's target and
// returns its stdout (trimmed) and exit code.
func cliJSON(t *testing.T, root string, args ...string) (string, int) {
	t.Helper()
	full := append([]string{args[0], "--sessions", root, "--target-cwd", mcpTargetCWD}, args[1:]...)
	r := runCLI(t, "", full...)
	return strings.TrimSuffix(r.stdout, "\n"), r.code
}

// texts returns the text blocks of a tool result.
func texts(t *testing.T, res *mcp.CallToolResult) []string {
	t.Helper()
	var out []string
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			t.Fatalf("content %T is not text", c)
		}
		out = append(out, tc.Text)
	}
	return out
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return res
}

// cliPrepared is the CLI's prepare output (or error).
type cliPrepared struct {
	Content        string          `json:"content"`
	References     json.RawMessage `json:"references"`
	ContextMessage *struct {
		Source  json.RawMessage `json:"source"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"contextMessage"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func cliPrepare(t *testing.T, root, text string, flags ...string) cliPrepared {
	t.Helper()
	out, _ := cliJSON(t, root, append(append([]string{"prepare"}, flags...), "--", text)...)
	var p cliPrepared
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("CLI prepare output %q: %v", out, err)
	}
	return p
}

// TestMCPMatchesCLI drives the MCP server through the SDK's in-memory
// transport on both fixture stores — initialize, list tools, resources and
// templates, call each tool, read resources — and compares every answer
// with the command line's on the same store and target.
func TestMCPMatchesCLI(t *testing.T) {
	t.Parallel()
	for _, store := range []string{"store-raw", "store-zstd"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			root, err := filepath.Abs(filepath.Join("../../testdata/fixtures", store))
			if err != nil {
				t.Fatal(err)
			}
			before := treeDigest(t, root)
			cs := connectMCP(t, root)
			ctx := context.Background()

			init := cs.InitializeResult()
			if init.ServerInfo.Name != "dsh-lsp" || init.Capabilities.Tools == nil || init.Capabilities.Resources == nil || !init.Capabilities.Resources.ListChanged {
				t.Fatalf("initialize result: server %+v, capabilities %+v", init.ServerInfo, init.Capabilities)
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range tools.Tools {
				names = append(names, tool.Name)
				if !strings.Contains(tool.Description, "UNTRUSTED") || tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
					t.Errorf("tool %s: description %q does not warn that sessions are untrusted, or it is not read-only", tool.Name, tool.Description)
				}
			}
			slices.Sort(names)
			if want := []string{mcpserver.ToolPrepare, mcpserver.ToolRead, mcpserver.ToolSearch}; !slices.Equal(names, want) {
				t.Fatalf("tools %v, want %v", names, want)
			}
			templates, err := cs.ListResourceTemplates(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(templates.ResourceTemplates) != 1 || templates.ResourceTemplates[0].URITemplate != mcpserver.URITemplate {
				t.Fatalf("resource templates %+v", templates.ResourceTemplates)
			}

			// dsh_search_sessions == dsh-lsp candidates, byte for byte.
			wantAll, code := cliJSON(t, root, "candidates")
			if code != 0 {
				t.Fatalf("CLI candidates: exit %d: %s", code, wantAll)
			}
			for _, tc := range []struct {
				args    map[string]any
				cliArgs []string
			}{
				{map[string]any{}, nil},
				{map[string]any{"query": "GIT"}, []string{"GIT"}},
				{map[string]any{"query": "home", "limit": 2}, []string{"--limit", "2", "home"}},
				{map[string]any{"query": "no such session"}, []string{"no such session"}},
			} {
				res := callTool(t, cs, mcpserver.ToolSearch, tc.args)
				want, code := cliJSON(t, root, append([]string{"candidates"}, tc.cliArgs...)...)
				if got := texts(t, res); res.IsError || code != 0 || len(got) != 1 || got[0] != want {
					t.Errorf("search %v: got %q (isError %v), CLI says %q (exit %d)", tc.args, got, res.IsError, want, code)
				}
			}
			var cands []reference.CandidateItem
			if err := json.Unmarshal([]byte(wantAll), &cands); err != nil || len(cands) < 2 {
				t.Fatalf("CLI candidates %q: %v", wantAll, err)
			}

			// Resources: the recent sessions, in candidate order.
			resources, err := cs.ListResources(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var uris []string
			for _, r := range resources.Resources {
				uris = append(uris, r.URI)
			}
			var wantURIs []string
			for _, c := range cands {
				wantURIs = append(wantURIs, c.URI)
			}
			if !slices.Equal(uris, wantURIs) {
				t.Errorf("resources %v, want the candidates' URIs %v", uris, wantURIs)
			}

			for _, c := range cands {
				// dsh_read_session and the resource == the context message
				// of a prompt citing that session (its candidate mention).
				want := cliPrepare(t, root, "about "+c.Mention)
				for _, args := range []map[string]any{{"uri": c.URI}, {"sessionId": c.SessionID}} {
					res := callTool(t, cs, mcpserver.ToolRead, args)
					got := texts(t, res)
					if want.ContextMessage == nil {
						if !res.IsError || want.Error == nil || !strings.HasPrefix(got[0], want.Error.Code+": ") {
							t.Errorf("read %v: got %q, CLI error %+v", args, got, want.Error)
						}
						continue
					}
					if res.IsError || len(got) != 1 || got[0] != want.ContextMessage.Content[0].Text {
						t.Errorf("read %v:\n got %q\nwant %q", args, got, want.ContextMessage.Content[0].Text)
					}
				}
				rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: c.URI})
				if want.ContextMessage != nil {
					if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != want.ContextMessage.Content[0].Text || rr.Contents[0].MIMEType != mcpserver.MIMEType {
						t.Errorf("read resource %s: %v %+v", c.URI, err, rr)
					}
				} else if err == nil || !strings.Contains(err.Error(), want.Error.Code) {
					t.Errorf("read resource %s: error %v, want the CLI's %s", c.URI, err, want.Error.Code)
				}

				// A small maxBytes == the CLI with --max-reference-bytes:
				// the same truncated snapshot, or the same error code.
				small := cliPrepare(t, root, "about "+c.Mention, "--max-reference-bytes", "1200")
				res := callTool(t, cs, mcpserver.ToolRead, map[string]any{"uri": c.URI, "maxBytes": 1200})
				got := texts(t, res)
				switch {
				case small.ContextMessage != nil:
					if res.IsError || got[0] != small.ContextMessage.Content[0].Text {
						t.Errorf("read %s maxBytes 1200:\n got %q\nwant %q", c.SessionID, got, small.ContextMessage.Content[0].Text)
					}
				case !res.IsError || !strings.HasPrefix(got[0], small.Error.Code+": "):
					t.Errorf("read %s maxBytes 1200: got %q, CLI error %+v", c.SessionID, got, small.Error)
				}
			}

			// dsh_prepare == dsh-lsp prepare: readable text, references,
			// context message (all but its random id).
			for _, text := range []string{
				"no mention at all",
				"compare " + cands[0].Mention + " with " + cands[1].Mention + " and " + cands[0].Mention,
				"bare " + cands[1].URI + " please",
			} {
				want := cliPrepare(t, root, text)
				res := callTool(t, cs, mcpserver.ToolPrepare, map[string]any{"text": text})
				got := texts(t, res)
				var structured cliPrepared
				b, _ := json.Marshal(res.StructuredContent)
				if err := json.Unmarshal(b, &structured); err != nil {
					t.Fatalf("prepare %q: structuredContent %s: %v", text, b, err)
				}
				if want.Error != nil {
					t.Fatalf("CLI prepare %q failed: %+v", text, want.Error)
				}
				wantTexts := []string{want.Content}
				if want.ContextMessage != nil {
					wantTexts = append(wantTexts, want.ContextMessage.Content[0].Text)
					if structured.ContextMessage == nil || !sameJSON(structured.ContextMessage.Source, want.ContextMessage.Source) ||
						structured.ContextMessage.Content[0].Text != want.ContextMessage.Content[0].Text {
						t.Errorf("prepare %q: structured context message %s differs from the CLI's", text, b)
					}
				}
				if res.IsError || !slices.Equal(got, wantTexts) || structured.Content != want.Content || !sameJSON(structured.References, want.References) {
					t.Errorf("prepare %q:\n got %q %s\nwant %q %s", text, got, b, wantTexts, want.References)
				}
			}

			// Bad input: a tool error with the code the CLI gives for the
			// same mistake (or INVALID_CONFIG for argument shapes, like the
			// CLI's usage errors); the session keeps serving.
			unknown := reference.EncodeURI("no-such-session")
			four := cands[0].Mention + " " + cands[1].Mention + " @[x](" + reference.EncodeURI("x") + ") @[y](" + reference.EncodeURI("y") + ")"
			for _, tc := range []struct {
				tool    string
				args    any
				cliText string // "" when the CLI has no counterpart
				code    reference.Code
			}{
				{mcpserver.ToolRead, map[string]any{"uri": unknown}, "@[x](" + unknown + ")", reference.CodeReadFailed},
				{mcpserver.ToolRead, map[string]any{"sessionId": "no-such-session"}, "@[x](" + unknown + ")", reference.CodeReadFailed},
				{mcpserver.ToolRead, map[string]any{"uri": "dsh-session:%%%"}, "@[x](dsh-session:%%%)", reference.CodeInvalidReference},
				{mcpserver.ToolRead, map[string]any{"uri": "dsh-session:eyJhIjoxfQ"}, "@[x](dsh-session:eyJhIjoxfQ)", reference.CodeInvalidReference},
				{mcpserver.ToolRead, map[string]any{"uri": cands[0].URI, "sessionId": cands[0].SessionID}, "", reference.CodeInvalidConfig},
				{mcpserver.ToolRead, map[string]any{}, "", reference.CodeInvalidConfig},
				{mcpserver.ToolRead, map[string]any{"uri": cands[0].URI, "maxBytes": 0}, "", reference.CodeInvalidConfig},
				{mcpserver.ToolRead, map[string]any{"uri": cands[0].URI, "maxBytes": 1 << 30}, "", reference.CodeInvalidConfig},
				{mcpserver.ToolPrepare, map[string]any{"text": four}, four, reference.CodeTooMany},
				{mcpserver.ToolPrepare, map[string]any{"text": "see @[x](dsh-session:%%%)"}, "see @[x](dsh-session:%%%)", reference.CodeInvalidReference},
				{mcpserver.ToolPrepare, map[string]any{"text": "x " + "@[x](" + unknown + ")"}, "x @[x](" + unknown + ")", reference.CodeReadFailed},
				{mcpserver.ToolPrepare, map[string]any{"text": strings.Repeat("a", mcpserver.MaxTextBytes+1)}, "", reference.CodeInvalidConfig},
				{mcpserver.ToolPrepare, map[string]any{}, "", reference.CodeInvalidConfig},
				{mcpserver.ToolPrepare, map[string]any{"text": 42}, "", reference.CodeInvalidConfig},
				{mcpserver.ToolSearch, map[string]any{"query": 42}, "", reference.CodeInvalidConfig},
				{mcpserver.ToolSearch, map[string]any{"query": []string{"a"}}, "", reference.CodeInvalidConfig},
				{mcpserver.ToolSearch, map[string]any{"limit": 0}, "", reference.CodeInvalidReference},
				{mcpserver.ToolSearch, map[string]any{"limit": 1.5}, "", reference.CodeInvalidReference},
				{mcpserver.ToolSearch, map[string]any{"limit": "3"}, "", reference.CodeInvalidReference},
				{mcpserver.ToolSearch, map[string]any{"qurey": "x"}, "", reference.CodeInvalidConfig},
				{mcpserver.ToolSearch, []int{1}, "", reference.CodeInvalidConfig},
			} {
				res := callTool(t, cs, tc.tool, tc.args)
				got := texts(t, res)
				var structured struct {
					Error struct{ Code, Message string }
				}
				b, _ := json.Marshal(res.StructuredContent)
				_ = json.Unmarshal(b, &structured)
				if !res.IsError || len(got) != 1 || !strings.HasPrefix(got[0], string(tc.code)+": ") || structured.Error.Code != string(tc.code) {
					t.Errorf("%s %v: got %q (isError %v, structured %s), want a %s tool error", tc.tool, tc.args, got, res.IsError, b, tc.code)
				}
				if tc.cliText != "" {
					if p := cliPrepare(t, root, tc.cliText); p.Error == nil || p.Error.Code != string(tc.code) {
						t.Errorf("the CLI says %+v for %q, want %s", p.Error, tc.cliText, tc.code)
					}
				}
			}
			// Still serving after all that.
			if res := callTool(t, cs, mcpserver.ToolSearch, map[string]any{}); res.IsError || texts(t, res)[0] != wantAll {
				t.Errorf("search after bad input: %q", texts(t, res))
			}
			// A malformed or unknown resource URI: an error naming the code.
			for uri, code := range map[string]reference.Code{"dsh-session:%%%": reference.CodeInvalidReference, unknown: reference.CodeReadFailed} {
				if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil || !strings.Contains(err.Error(), string(code)) {
					t.Errorf("read resource %s: error %v, want %s", uri, err, code)
				}
			}
			if after := treeDigest(t, root); after != before {
				t.Error("the fixture store changed: the MCP server must never write it")
			}
		})
	}
}

// sameJSON reports whether two JSON texts hold the same value (the SDK
// client decodes structuredContent into maps, so key order is lost).
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// treeDigest lists every path, mode, size and mtime under root.
func treeDigest(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		b.WriteString(p + " " + fi.Mode().String() + " " + fi.ModTime().String() + " " + jsonNum(fi.Size()) + "\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestMCPStdio runs the built binary's `mcp` subcommand over stdio with
// the SDK's command transport: the process speaks MCP, and a bad flag is
// refused before any MCP traffic with the CLI's error JSON.
func TestMCPStdio(t *testing.T) {
	root, _ := filepath.Abs(storeRaw)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.Command(binary, "mcp", "--sessions", root, "--target-cwd", mcpTargetCWD, "--max-read-mb", "64")
	cmd.Env = cleanEnv(t.TempDir(), "XDG_CACHE_HOME="+t.TempDir())
	client := mcp.NewClient(&mcp.Implementation{Name: "dsh-lsp-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpserver.ToolSearch, Arguments: map[string]any{"query": "git"}})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := cliJSON(t, root, "candidates", "git")
	if got := texts(t, res); res.IsError || len(got) != 1 || got[0] != want {
		t.Errorf("search over stdio: %q, want %q", got, want)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("closing the stdio session: %v", err)
	}

	for _, args := range [][]string{{"mcp", "--max-references", "4"}, {"mcp", "extra"}, {"mcp", "--log-level", "loud"}} {
		r := runCLI(t, "", args...)
		if r.code != 1 || !strings.Contains(r.stdout, `"code":"SESSION_REFERENCE_INVALID_CONFIG"`) {
			t.Errorf("%v: exit %d, stdout %q", args, r.code, r.stdout)
		}
	}
}
