package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/dsh-lsp/dsh-lsp/internal/golden"
	"github.com/dsh-lsp/dsh-lsp/lsp/lsptest"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// fidelityRequest is one request of the golden or fixture suites, asked of
// a store on disk through the CLI and the server.
type fidelityRequest struct {
	name   string
	store  string
	target reference.Target
	// config holds the numeric settings (maxReferences, candidateLimit,
	// maxReferenceBytes) the case sets.
	config map[string]int64
	// candidates: query and limit (nil: absent); prepare: text.
	prepare bool
	query   *string
	limit   *int64
	text    string
}

// cliArgs is the request as `dsh-lsp candidates|prepare` arguments.
func (r fidelityRequest) cliArgs() []string {
	args := []string{"candidates"}
	if r.prepare {
		args[0] = "prepare"
	}
	args = append(args, "--sessions", r.store)
	if r.target.SessionID != nil {
		args = append(args, "--target-id", *r.target.SessionID)
	}
	if r.target.CWD != nil {
		args = append(args, "--target-cwd", *r.target.CWD)
	}
	for key, flag := range map[string]string{"maxReferences": "--max-references", "candidateLimit": "--candidate-limit", "maxReferenceBytes": "--max-reference-bytes"} {
		if v, ok := r.config[key]; ok {
			args = append(args, flag, strconv.FormatInt(v, 10))
		}
	}
	if r.prepare {
		return append(args, "--", r.text)
	}
	if r.limit != nil {
		args = append(args, "--limit", strconv.FormatInt(*r.limit, 10))
	}
	if r.query != nil {
		args = append(args, "--", *r.query)
	}
	return args
}

// messageID is the random uuid of a context message: the one part of an
// answer that differs from run to run.
var messageID = regexp.MustCompile(`"id":"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"`)

func normalizeAnswer(s string) string {
	return messageID.ReplaceAllString(strings.TrimSpace(s), `"id":"<uuid>"`)
}

// fidelityRequests materializes every golden candidates and prepare case
// whose sessions can be written as a real store (cases with injected
// surfaces, failures or cancellation cannot), alternately raw and zstd,
// and adds requests over the fixture stores and the golden jsonl-root.
func fidelityRequests(t *testing.T) []fidelityRequest {
	t.Helper()
	var out []fidelityRequest
	n := 0
	for _, group := range []string{"candidates", "prepare"} {
		for _, c := range golden.Load(t, group) {
			var in struct {
				Target struct {
					ID        *string `json:"id"`
					CWD       *string `json:"cwd"`
					CreatedAt int64   `json:"createdAt"`
				} `json:"target"`
				Sessions    []golden.Session  `json:"sessions"`
				Config      map[string]any    `json:"config"`
				Query       *string           `json:"query"`
				Limit       *float64          `json:"limit"`
				MentionText *string           `json:"mentionText"`
				References  []json.RawMessage `json:"references"`
				Surfaces    json.RawMessage   `json:"surfaces"`
				Failures    json.RawMessage   `json:"readFailures"`
				Titles      json.RawMessage   `json:"titleFailures"`
				PreAborted  bool              `json:"preAborted"`
				Remote      bool              `json:"remote"`
			}
			if err := json.Unmarshal(c.Input, &in); err != nil {
				t.Fatalf("%s/%s: %v", group, c.Name, err)
			}
			if in.Surfaces != nil || in.Failures != nil || in.Titles != nil || in.PreAborted || in.Remote {
				continue
			}
			req := fidelityRequest{name: group + "/" + c.Name, target: reference.Target{SessionID: in.Target.ID, CWD: in.Target.CWD},
				config: map[string]int64{}, prepare: group == "prepare", query: in.Query}
			usable := true
			for k, v := range in.Config {
				f, ok := v.(float64)
				usable = usable && ok && f == float64(int64(f))
				req.config[k] = int64(f)
			}
			if in.Limit != nil {
				l := int64(*in.Limit)
				usable = usable && float64(l) == *in.Limit
				req.limit = &l
			}
			if req.prepare {
				switch {
				case in.MentionText != nil:
					req.text = *in.MentionText
				default:
					var parts []string
					for _, raw := range in.References {
						var ref struct {
							SessionID *string `json:"sessionId"`
							Label     *string `json:"label"`
						}
						if json.Unmarshal(raw, &ref) != nil || ref.SessionID == nil {
							usable = false
							break
						}
						parts = append(parts, reference.FormatMention(*ref.SessionID, ref.Label))
					}
					req.text = "see " + strings.Join(parts, " and ")
				}
			}
			if !usable {
				continue
			}
			sessions := in.Sessions
			if in.Target.ID != nil {
				sessions = append(sessions, golden.Session{ID: *in.Target.ID, CWD: in.Target.CWD, CreatedAt: in.Target.CreatedAt})
			}
			enc := []sessionstore.Encoding{sessionstore.Raw, sessionstore.Zstd}[n%2]
			n++
			req.store = writeGoldenStore(t, sessions, enc)
			out = append(out, req)
		}
	}
	for _, store := range []string{"../../testdata/fixtures/store-raw", "../../testdata/fixtures/store-zstd", "../../testdata/golden/jsonl-root"} {
		abs, err := filepath.Abs(store)
		if err != nil {
			t.Fatal(err)
		}
		// The fixtures are read in place: copy them, so that nothing a
		// test run leaves (there should be nothing) can change them.
		root := t.TempDir()
		if err := os.CopyFS(root, os.DirFS(abs)); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"", "a", "GIT", "proj", "ü"} {
			out = append(out, fidelityRequest{name: filepath.Base(store) + "/candidates " + q, store: root, query: &q})
		}
		hs := listStore(t, root)
		for _, h := range hs {
			out = append(out, fidelityRequest{name: filepath.Base(store) + "/prepare " + h.ID, store: root, prepare: true,
				text: "see " + reference.FormatMention(h.ID, nil), config: map[string]int64{"maxReferenceBytes": 700}})
		}
	}
	return out
}

// writeGoldenStore writes sessions as dsh stores them (golden.BuildLog),
// one zstd frame per line for zstd, and returns the store root.
func writeGoldenStore(t *testing.T, sessions []golden.Session, enc sessionstore.Encoding) string {
	t.Helper()
	root := t.TempDir()
	for _, s := range sessions {
		log, err := golden.BuildLog(s)
		if err != nil {
			t.Fatal(err)
		}
		if enc == sessionstore.Zstd {
			var frames bytes.Buffer
			zw, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
			for _, line := range bytes.SplitAfter(log, []byte("\n")) {
				if len(line) > 0 {
					frames.Write(zw.EncodeAll(line, nil))
				}
			}
			log = frames.Bytes()
		}
		path, err := sessionstore.SessionPath(root, s.CWD, s.ID, enc)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, log, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func listStore(t *testing.T, root string) []reference.SessionHeader {
	t.Helper()
	x, err := sessionstore.OpenIndexed(root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache, Snapshot: true})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if err := x.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	hs, err := x.ListSessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return hs
}

// TestAnswersSameColdAndWarm: a cache is derived data. Every request of
// the golden and fixture suites is asked of the CLI twice on one cache
// directory (cold, then from the cache the first run wrote), and of a
// server, then of a server restarted on that server's cache; every answer
// equals the CLI's cold one.
func TestAnswersSameColdAndWarm(t *testing.T) {
	reqs := fidelityRequests(t)
	if len(reqs) < 50 {
		t.Fatalf("only %d requests materialized", len(reqs))
	}
	home := t.TempDir()
	cacheHome := filepath.Join(home, "cache")
	env := cleanEnv(home, "XDG_CACHE_HOME="+cacheHome)
	cold := make([]string, len(reqs))
	for i, r := range reqs {
		first := runCLIEnv(t, env, r.cliArgs()...)
		second := runCLIEnv(t, env, r.cliArgs()...)
		cold[i] = normalizeAnswer(first.stdout)
		if warm := normalizeAnswer(second.stdout); warm != cold[i] || first.code != second.code {
			t.Errorf("%s: CLI answers differ cold and warm (%s):\ncold (exit %d) %s\nwarm (exit %d) %s", r.name, strings.Join(r.cliArgs(), " "), first.code, cold[i], second.code, warm)
		}
	}

	serverCache := filepath.Join(home, "server-cache")
	serverEnv := cleanEnv(home, "XDG_CACHE_HOME="+serverCache)
	for _, restarted := range []bool{false, true} {
		ed, _, _ := startServerEnv(t, serverEnv)
		if _, err := ed.Initialize(map[string]any{"sessionsDir": reqs[0].store}); err != nil {
			t.Fatal(err)
		}
		for i, r := range reqs {
			want := cold[i]
			got := serverAnswer(t, ed, r)
			// The first server builds each store's index while it is asked:
			// it may answer from a partial first pass, so it is asked until
			// its answer is whole. The restarted one answers from the cache
			// the first wrote, and its first answer must be right.
			for deadline := time.Now().Add(20 * time.Second); !restarted && got != want && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
				got = serverAnswer(t, ed, r)
			}
			if got != want {
				t.Errorf("%s: server (restarted on its cache: %v) answers\n%s\nthe CLI\n%s", r.name, restarted, got, want)
			}
		}
		if err := ed.Shutdown(); err != nil {
			t.Fatal(err)
		}
	}
}

// serverAnswer asks r of the server (settings pushed first) and renders
// the result, or the error, as the CLI prints it.
func serverAnswer(t *testing.T, ed *lsptest.Editor, r fidelityRequest) string {
	t.Helper()
	settings := map[string]any{"sessionsDir": r.store}
	for k, v := range r.config {
		settings[k] = v
	}
	ed.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"dsh": settings}})
	target := map[string]any{}
	if r.target.SessionID != nil {
		target["sessionId"] = *r.target.SessionID
	}
	if r.target.CWD != nil {
		target["cwd"] = *r.target.CWD
	}
	var res json.RawMessage
	var err error
	if r.prepare {
		err = ed.Call(context.Background(), "dsh/prepare", map[string]any{"text": r.text, "target": target}, &res)
	} else {
		params := map[string]any{"target": target}
		if r.query != nil {
			params["query"] = *r.query
		}
		if r.limit != nil {
			params["limit"] = *r.limit
		}
		err = ed.Call(context.Background(), "dsh/candidates", params, &res)
	}
	if err != nil {
		if code := lsptest.ErrorDataCode(err); code != "" {
			msg := lsptest.RPCError(err).Message
			b, _ := json.Marshal(map[string]any{"error": map[string]string{"code": code, "message": msg}})
			return normalizeAnswer(string(b))
		}
		return fmt.Sprintf("error %v", err)
	}
	return normalizeAnswer(string(res))
}

// runCLIEnv runs the binary with env.
func runCLIEnv(t *testing.T, env []string, args ...string) result {
	t.Helper()
	return runCLIWith(t, env, "", args...)
}
