// Package lsp is the dsh-lsp language server: session-mention completion,
// diagnostics, hover, quick fixes and prompt preparation over LSP 3.17.
//
// Layout follows gopls: server.go wires the connection and dispatches
// methods; each feature lives in its own file (lifecycle.go, text.go,
// completion.go, diagnostics.go, hover.go, codeaction.go, command.go,
// dsh.go for the dsh/* methods, config.go, progress.go); index.go has the
// Source the server reads a store through, backpressure.go and memo.go the
// one read limiter and the one memo of what session reads give. Params
// and most results are go.lsp.dev/protocol's types; lsp/wire has the codec
// and the results encoded by hand (session text keeps JSON.stringify's
// bytes); lsp/position maps offsets to positions.
//
// Concurrency: jsonrpc2 runs a handler inline on the connection's read
// goroutine. Notifications (text sync, configuration, dsh/setTarget) are
// handled inline, so they are applied in wire order. Every request is
// registered once in methods (request[P, S]): its params are decoded and
// the state it needs is snapshotted inline, then the read loop is released
// with jsonrpc2.Async: long requests and server-to-client calls cannot
// deadlock the connection, later requests see earlier edits, and
// $/cancelRequest is observed while a request runs.
package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/dsh-lsp/dsh-lsp/contentindex"
	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
	"github.com/dsh-lsp/dsh-lsp/lsp/position"
	"github.com/dsh-lsp/dsh-lsp/lsp/wire"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// LSP error codes not defined by jsonrpc2.
const (
	codeServerNotInitialized jsonrpc2.Code = -32002
	codeRequestFailed        jsonrpc2.Code = -32803
	codeRequestCancelled     jsonrpc2.Code = -32800
)

// Options configure a Server.
type Options struct {
	// Logger receives the server's logs; nil discards them.
	Logger *slog.Logger
	// SessionsDir is the --sessions flag; the sessionsDir setting overrides it.
	SessionsDir string
	// OpenSource opens the session source for a store root (tests inject
	// wrapped indexes). Nil means sessionstore.OpenIndexed: listings and
	// titles come from an index of session metadata (persisted in the
	// user cache directory, outside the store), so completion does not
	// parse logs once the index is complete. While its first pass runs,
	// listings come from its partial snapshot (lsp/index.go); its
	// generation and per-session versions key what the server derives
	// from it, and diagnostics are re-published when it changes
	// (lsp/fresh.go).
	OpenSource func(root string) (Source, error)
	// ResolveRoot resolves the store root from a flag/setting value (empty:
	// $DSH_HOME/sessions or ~/.dsh/sessions). Nil means
	// sessionstore.ResolveRoot.
	ResolveRoot func(flag string) (string, error)
	// Version is reported in serverInfo.
	Version string
	// DiagnosticsDelay is the debounce before diagnostics are computed after
	// an edit; 0 means 150ms.
	DiagnosticsDelay time.Duration
	// MaxConcurrentReads bounds the session reads (of prepare, hover and
	// completionItem/resolve) running at once; more wait in a queue,
	// cancellable. 0 means GOMAXPROCS-1 (at least 1).
	MaxConcurrentReads int
	// NoContentIndex turns content search off whatever the contentSearch
	// setting says (--no-content-index): no content index is built or
	// kept.
	NoContentIndex bool
}

type lifecycle int

const (
	stateNew         lifecycle = iota // before initialize
	stateInitialized                  // initialize answered
	stateShutdown                     // shutdown answered
)

// Server is one LSP session over one connection.
type Server struct {
	opts   Options
	logger *slog.Logger

	conn jsonrpc2.Conn
	// lent are the pooled answers jsonrpc2 has yet to write.
	lent lentAnswers
	// ctx is the connection-lifetime context; cancelled when the session
	// ends so that running requests stop.
	ctx    context.Context
	cancel context.CancelFunc

	mu        sync.Mutex
	state     lifecycle
	exited    bool
	exitCh    chan struct{}
	encoding  position.Encoding
	caps      clientCaps
	settings  settings
	workspace *string      // cwd of the first workspace folder
	folders   []string     // workspace folder URIs, in order
	env       *environment // set by initialize, never nil afterwards
	docs      map[string]*document
	// pendingTargets holds dsh/setTarget targets of documents not open yet.
	pendingTargets map[string]reference.Target

	inflight struct {
		sync.Mutex
		m map[jsonrpc2.ID]context.CancelFunc
	}

	// sources are the open session sources, by store root: the current
	// environment's and the one it replaced (recent, oldest first; see
	// useEnvironment). closing counts the closes still running.
	sources map[string]Source
	recent  []string
	closing sync.WaitGroup
	// contents are the content indexes opened so far, by store root.
	contents map[string]*contentSearch
	// contentHits caches completion content searches (content.go).
	contentHits contentHits
	// contentSyncSource, when set (tests), wraps the source content index
	// syncs read, so that a test can hold a sync in progress.
	contentSyncSource func(contentindex.Source) contentindex.Source
	// progress reports indexing progress while a $/progress token is open.
	progress atomic.Pointer[func(done, total int)]

	diag diagnosticsScheduler
	// reads limits the session reads running at once (a prepare's
	// parallel reads included); memo keeps what was derived from them per
	// session version (backpressure.go, memo.go).
	reads *limiter
	memo  memo
	bg    sync.WaitGroup // background goroutines (diagnostics, progress)
}

// clientCaps are the client capabilities the server uses.
type clientCaps struct {
	// ale is set for Vim ALE (byte columns, its own completion shape).
	ale              bool
	workDoneProgress bool
	hoverMarkdown    bool
	docMarkdown      bool
}

// New returns a server with the given options.
func New(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.ResolveRoot == nil {
		opts.ResolveRoot = sessionstore.ResolveRoot
	}
	if opts.DiagnosticsDelay <= 0 {
		opts.DiagnosticsDelay = 150 * time.Millisecond
	}
	return &Server{
		opts:           opts,
		logger:         opts.Logger,
		exitCh:         make(chan struct{}),
		encoding:       position.UTF16,
		settings:       defaultSettings(),
		docs:           make(map[string]*document),
		pendingTargets: make(map[string]reference.Target),
		sources:        make(map[string]Source),
		contents:       make(map[string]*contentSearch),
		reads:          newLimiter(readConcurrency(opts.MaxConcurrentReads)),
		memo:           memo{maxBytes: maxMemoBytes},
	}
}

// Serve runs the LSP session over stream until the client sends exit or
// disconnects, and returns the process exit code LSP prescribes: 0 after
// shutdown+exit, 1 otherwise (exit without shutdown, or a lost client).
func (s *Server) Serve(ctx context.Context, stream jsonrpc2.Stream) int {
	ctx = protocol.WithLogger(ctx, s.logger)
	s.ctx, s.cancel = context.WithCancel(ctx)
	eof := make(chan struct{})
	ws := &watchedStream{Stream: stream, eof: eof, lent: &s.lent}
	s.conn = jsonrpc2.NewConn(ws, jsonrpc2.WithCodec(wire.Codec{}))
	s.conn.Go(s.ctx, s.dispatch)

	select {
	case <-s.exitCh:
	case <-ws.eofCh():
		s.logger.Info("client disconnected")
	case <-s.conn.Done():
	case <-ctx.Done():
	}
	s.cancel()
	s.diag.stopAll(&s.bg)
	// Close waits for the read goroutine; a stdio reader blocked on a
	// stdin the client keeps open cannot be interrupted, so do not wait
	// forever (the process is about to exit anyway).
	closed := make(chan struct{})
	go func() {
		_ = s.conn.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(2 * time.Second):
		s.logger.Warn("connection did not close within 2s")
	}
	s.bg.Wait()

	s.releaseSources(func(string) bool { return true })
	s.closing.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeContentsLocked()
	if s.exited && s.state == stateShutdown {
		return 0
	}
	return 1
}

// watchedStream signals when reading from the client fails (disconnect), so
// the server can cancel running requests instead of waiting for them.
//
// It also keeps the connection alive across well-framed messages that are not
// valid JSON-RPC: jsonrpc2's Read fails on them, which would end the
// connection, although the frame was fully read and the next one can be read.
// Per JSON-RPC 2.0 such a message is answered with an error response whose id
// is null (-32700 for invalid JSON, -32600 for a batch or an invalid request
// object) and reading goes on. Only a broken frame (bad header, EOF inside a
// body) or a failed write ends the connection.
type watchedStream struct {
	jsonrpc2.Stream
	once sync.Once
	eof  chan struct{}
	// lent are the answers whose buffers return to their pool once
	// written.
	lent *lentAnswers
}

// Write writes msg, then gives back the answer buffer lent for ctx, if
// any: the frame holds a copy of it now.
func (w *watchedStream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	n, err := w.Stream.Write(ctx, msg)
	w.lent.giveBack(ctx)
	return n, err
}

// frameReader is implemented by jsonrpc2's own streams (header, ndjson,
// channel): ReadFrame returns a frame's body without decoding it. The method
// is deliberately not promoted on watchedStream: a Stream with ReadFrame and
// WriteFrame gets jsonrpc2's batch support, which LSP does not use.
type frameReader interface {
	ReadFrame(ctx context.Context) ([]byte, int64, error)
}

func (w *watchedStream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	for {
		msg, n, err := w.readMessage(ctx)
		if err == nil {
			return msg, n, nil
		}
		var bad *jsonrpc2.Error
		if errors.As(err, &bad) && (bad.Code == jsonrpc2.ParseError || bad.Code == jsonrpc2.InvalidRequest) {
			// The frame was consumed; answer it and read the next one.
			if _, err = w.Stream.Write(ctx, jsonrpc2.NewResponse(jsonrpc2.ID{}, nil, validUTF8Error(bad))); err == nil {
				continue
			}
		}
		w.once.Do(func() { close(w.eof) })
		return nil, 0, err
	}
}

// readMessage reads and decodes the next frame. A frame that was read in full
// but does not decode yields a *jsonrpc2.Error with code ParseError or
// InvalidRequest; any other error means the stream itself failed.
func (w *watchedStream) readMessage(ctx context.Context) (jsonrpc2.Message, int64, error) {
	fr, ok := w.Stream.(frameReader)
	if !ok {
		// jsonrpc2's streams report an undecodable body as ErrParse or
		// ErrInvalidRequest, after consuming the frame.
		return w.Stream.Read(ctx)
	}
	body, n, err := fr.ReadFrame(ctx)
	if err != nil {
		return nil, 0, err
	}
	msg, err := jsonrpc2.DecodeMessage(body)
	if err != nil {
		return nil, 0, malformedMessage(body)
	}
	return msg, n, nil
}

// malformedMessage returns the JSON-RPC error for a frame body that
// jsonrpc2.DecodeMessage rejected, saying what is wrong with it.
func malformedMessage(body []byte) *jsonrpc2.Error {
	if !json.Valid(body) {
		return jsonrpc2.NewError(jsonrpc2.ParseError, "parse error: the message body is not valid JSON")
	}
	invalid := func(why string) *jsonrpc2.Error {
		return jsonrpc2.NewError(jsonrpc2.InvalidRequest, "invalid request: "+why)
	}
	if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '[' {
		return invalid("batch messages are not supported (LSP sends one message per frame)")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
		return invalid("the message is not a JSON object")
	}
	var version string
	if json.Unmarshal(obj["jsonrpc"], &version) != nil || version != "2.0" {
		return invalid(`"jsonrpc" must be "2.0"`)
	}
	if id, ok := obj["id"]; ok && !validID(id) {
		return invalid(fmt.Sprintf(`"id" must be a string, an integer within 64 bits or null, not %.40s`, id))
	}
	if m, ok := obj["method"]; ok {
		var method string
		if json.Unmarshal(m, &method) != nil {
			return invalid(`"method" must be a string`)
		}
		if _, ok := obj["result"]; ok {
			return invalid(`a message cannot have both "method" and "result"`)
		}
		if _, ok := obj["error"]; ok {
			return invalid(`a message cannot have both "method" and "error"`)
		}
		return invalid("the request object is malformed")
	}
	return invalid(`neither a request ("method") nor a valid response ("result" or "error")`)
}

// validID reports whether raw is an id jsonrpc2 accepts: a string, an
// integer that fits int64, or null.
func validID(raw json.RawMessage) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch v.(type) {
	case nil, string:
		return true
	case float64:
		var n int64
		return json.Unmarshal(raw, &n) == nil
	}
	return false
}

func (w *watchedStream) eofCh() <-chan struct{} { return w.eof }

// handler is one registered LSP method. A method is a request or a
// notification; the other form of it is refused as it was before typed
// dispatch: a notification sent as a request is -32601, a request sent as a
// notification is ignored.
type handler interface {
	// answer handles the method sent as a request, on the read loop until
	// release is called.
	answer(s *Server, ctx context.Context, method string, params json.RawMessage, release func()) (any, error)
	// notify handles the method sent as a notification, inline.
	notify(s *Server, ctx context.Context, method string, params json.RawMessage)
}

// request registers a request whose params decode into P. Each phase has
// one place, so none can be forgotten:
//
//  1. decode the params into P (failure: -32602 naming the method);
//  2. inline, on the read loop: validate and snapshot the state the
//     request needs into S (so it sees every edit sent before it);
//  3. release the read loop (jsonrpc2.Async): later messages are read while
//     the request runs and $/cancelRequest is observed;
//  4. async: the slow work, from S only;
//  5. map every error with requestError (cancellation -32800, dsh errors
//     -32803 with data.code, JSON-RPC errors as they are, else -32603); a
//     request cancelled before or during its work answers -32800.
//
// A request without async (initialize, shutdown) runs wholly inline, its
// S being the result: it changes the lifecycle state before the next
// message is read.
type request[P, S any] struct {
	// decode overrides the strict decoding of params (missing params are
	// -32602); nil means decodeParams.
	decode func(method string, params json.RawMessage) (P, error)
	inline func(s *Server, p *P) (S, error)
	async  func(s *Server, ctx context.Context, snap S) (any, error)
}

func (r request[P, S]) answer(s *Server, ctx context.Context, method string, params json.RawMessage, release func()) (any, error) {
	var p P
	var err error
	if r.decode != nil {
		p, err = r.decode(method, params)
	} else {
		err = decodeParams(method, params, &p)
	}
	if err != nil {
		return nil, requestError(ctx, err)
	}
	snap, err := r.inline(s, &p)
	switch {
	case err != nil:
		return nil, requestError(ctx, err)
	case r.async == nil:
		return snap, nil
	}
	release()
	if ctx.Err() != nil {
		return nil, requestError(ctx, ctx.Err()) // cancelled while queued
	}
	res, err := r.async(s, ctx, snap)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err() // cancelled while it ran: the client no longer waits for the result
	}
	if err != nil {
		return nil, requestError(ctx, err)
	}
	return res, nil
}

func (request[P, S]) notify(s *Server, _ context.Context, method string, _ json.RawMessage) {
	s.logger.Debug("request sent as a notification: ignored", "method", method)
}

// notification registers a notification whose params decode into P
// (missing or null params: the zero P). It runs inline on the read loop,
// so notifications apply in wire order.
type notification[P any] struct {
	apply func(s *Server, p *P)
	// rejected, when set, is told of params that do not decode (to show
	// the user); otherwise they are logged.
	rejected func(s *Server, err error)
}

func (n notification[P]) notify(s *Server, _ context.Context, method string, params json.RawMessage) {
	var p P
	if len(params) > 0 && string(params) != "null" {
		if err := wire.Decode(params, &p); err != nil {
			if n.rejected != nil {
				n.rejected(s, err)
			} else {
				s.logger.Warn("notification with invalid params ignored", "method", method, "error", err)
			}
			return
		}
	}
	n.apply(s, &p)
}

func (notification[P]) answer(_ *Server, _ context.Context, method string, _ json.RawMessage, _ func()) (any, error) {
	return nil, jsonrpc2.NewError(jsonrpc2.MethodNotFound, "method not found: "+method)
}

// noParams is the params of methods that take none; whatever is sent is
// ignored.
type noParams struct{}

// UnmarshalJSON accepts any value.
func (*noParams) UnmarshalJSON([]byte) error { return nil }

// optionalParams decodes params into P, leaving it zero when they are
// missing or null.
func optionalParams[P any](method string, params json.RawMessage) (P, error) {
	var p P
	if len(params) == 0 || string(params) == "null" {
		return p, nil
	}
	if err := wire.Decode(params, &p); err != nil {
		return p, invalidParams("%s: invalid params: %v", method, err)
	}
	return p, nil
}

// methods are the server's LSP methods (CONTRACT §5 for dsh/*).
var methods = map[string]handler{
	"initialize":               request[protocol.InitializeParams, protocol.InitializeResult]{inline: (*Server).initialize},
	"shutdown":                 request[noParams, any]{decode: optionalParams[noParams], inline: (*Server).shutdown},
	"textDocument/completion":  request[protocol.CompletionParams, completionSnap]{inline: (*Server).completionSnapshot, async: (*Server).completion},
	"completionItem/resolve":   request[wire.CompletionItem, resolveSnap]{inline: (*Server).resolveSnapshot, async: (*Server).completionResolve},
	"textDocument/hover":       request[protocol.HoverParams, hoverSnap]{inline: (*Server).hoverSnapshot, async: (*Server).hover},
	"textDocument/codeAction":  request[protocol.CodeActionParams, codeActionSnap]{inline: (*Server).codeActionSnapshot, async: (*Server).codeAction},
	"workspace/executeCommand": request[protocol.ExecuteCommandParams, prepareSnap]{inline: (*Server).executeCommand, async: (*Server).prepare},
	"dsh/prepare":              request[prepareInput, prepareSnap]{decode: parsePrepareParams, inline: (*Server).prepareSnapshot, async: (*Server).prepare},
	"dsh/candidates":           request[candidatesParams, listSnap]{decode: optionalParams[candidatesParams], inline: (*Server).candidatesSnapshot, async: (*Server).dshCandidates},
	"dsh/search":               request[searchParams, listSnap]{decode: optionalParams[searchParams], inline: (*Server).searchSnapshot, async: (*Server).dshSearch},

	"initialized":                         notification[noParams]{apply: (*Server).initialized},
	"exit":                                notification[noParams]{apply: (*Server).exit},
	"textDocument/didOpen":                notification[protocol.DidOpenTextDocumentParams]{apply: (*Server).didOpen},
	"textDocument/didChange":              notification[protocol.DidChangeTextDocumentParams]{apply: (*Server).didChange},
	"textDocument/didClose":               notification[protocol.DidCloseTextDocumentParams]{apply: (*Server).didClose},
	"workspace/didChangeConfiguration":    notification[protocol.DidChangeConfigurationParams]{apply: (*Server).didChangeConfiguration, rejected: badConfiguration},
	"workspace/didChangeWorkspaceFolders": notification[protocol.DidChangeWorkspaceFoldersParams]{apply: (*Server).didChangeWorkspaceFolders},
	"dsh/setTarget":                       notification[setTargetParams]{apply: (*Server).setTarget, rejected: badSetTarget},
}

// dispatch is the connection's handler. It handles $/cancelRequest itself
// rather than through jsonrpc2.CancelHandler: request contexts here derive
// from the connection-lifetime context, not from the pooled jsonrpc2
// request context (a context.WithCancel child of that pooled context can be
// touched by the runtime after the request is recycled).
func (s *Server) dispatch(rctx context.Context, req *jsonrpc2.Request) (any, error) {
	method := req.Method()
	params := json.RawMessage(req.Params())
	if method == protocol.MethodCancelRequest {
		s.cancelRequest(params)
		return nil, nil
	}
	if !req.IsCall() {
		s.handleNotification(s.ctx, method, params)
		// A notification's error would fail the whole connection.
		return nil, nil
	}
	// jsonrpc2 lends the method from the request's frame until the handler
	// returns; a request that releases the read loop ends after later
	// messages were read into that frame, and its method is still logged.
	method = strings.Clone(method)
	id := req.ID()
	ctx, cancel := context.WithCancel(s.ctx)
	s.inflight.Lock()
	if s.inflight.m == nil {
		s.inflight.m = make(map[jsonrpc2.ID]context.CancelFunc)
	}
	s.inflight.m[id] = cancel
	s.inflight.Unlock()
	defer func() {
		s.inflight.Lock()
		delete(s.inflight.m, id)
		s.inflight.Unlock()
		cancel()
	}()
	var once sync.Once
	release := func() { once.Do(func() { jsonrpc2.Async(rctx) }) }
	res, err := s.handle(ctx, method, params, release)
	if a, ok := res.(pooledAnswer); ok {
		// jsonrpc2 writes the response with rctx (lentAnswers).
		res = s.lent.lend(rctx, a)
	}
	return res, validUTF8Error(err)
}

// validUTF8Error returns err with its message (and data) as valid UTF-8:
// every byte sequence that is not UTF-8 becomes U+FFFD, one per maximal
// ill-formed subpart, as a JS reader decodes it. Such bytes reach a message
// through text quoted from the client's request (a method name, a params
// excerpt) or a file name, and a strict client drops the connection on a
// frame that is not UTF-8. (Results and notifications are repaired by
// wire.Codec.)
func validUTF8Error(err error) error {
	if err == nil || utf8.ValidString(err.Error()) {
		return err
	}
	var rpc *jsonrpc2.Error
	if errors.As(err, &rpc) {
		c := *rpc
		c.Message = jsjson.RepairUTF8String(c.Message)
		c.Data = jsjson.RepairUTF8(c.Data)
		return &c
	}
	return jsonrpc2.NewError(jsonrpc2.InternalError, jsjson.RepairUTF8String(err.Error()))
}

// cancelRequest handles $/cancelRequest.
func (s *Server) cancelRequest(params json.RawMessage) {
	var p struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.ID) == 0 {
		return
	}
	var id jsonrpc2.ID
	var n int64
	var str string
	switch {
	case json.Unmarshal(p.ID, &n) == nil:
		id = jsonrpc2.NewNumberID(n)
	case json.Unmarshal(p.ID, &str) == nil:
		id = jsonrpc2.NewStringID(str)
	default:
		return
	}
	s.inflight.Lock()
	cancel := s.inflight.m[id]
	s.inflight.Unlock()
	if cancel != nil {
		s.logger.Debug("request cancelled by the client", "id", string(p.ID))
		cancel()
	}
}

// handle runs one request after the lifecycle checks.
func (s *Server) handle(ctx context.Context, method string, params json.RawMessage, release func()) (any, error) {
	s.mu.Lock()
	state := s.state
	s.mu.Unlock()
	switch {
	case state == stateNew && method != "initialize":
		return nil, jsonrpc2.NewError(codeServerNotInitialized, fmt.Sprintf("server not initialized: %s before initialize", method))
	case state == stateInitialized && method == "initialize":
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "initialize sent twice")
	case state == stateShutdown:
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, fmt.Sprintf("server is shut down: %s after shutdown", method))
	}
	h := methods[method]
	if h == nil {
		return nil, jsonrpc2.NewError(jsonrpc2.MethodNotFound, "method not found: "+method)
	}
	start := time.Now()
	res, err := h.answer(s, ctx, method, params, release)
	if err != nil {
		s.logger.Debug("request failed", "method", method, "error", err, "elapsed", time.Since(start))
	} else {
		s.logger.Debug("request done", "method", method, "elapsed", time.Since(start))
	}
	return res, err
}

func (s *Server) handleNotification(ctx context.Context, method string, params json.RawMessage) {
	s.mu.Lock()
	state := s.state
	s.mu.Unlock()
	if method == "exit" {
		s.exit(nil)
		return
	}
	if state == stateNew || state == stateShutdown {
		// LSP: notifications before initialize (other than exit) are dropped;
		// after shutdown only exit matters.
		s.logger.Debug("notification dropped", "method", method, "state", state)
		return
	}
	h := methods[method]
	if h == nil {
		if !strings.HasPrefix(method, "$/") {
			s.logger.Debug("notification ignored", "method", method)
		}
		return
	}
	h.notify(s, ctx, method, params)
}

// decodeParams decodes params into v (wire.Decode: go.lsp.dev/protocol's
// types with its codec), mapping failures to InvalidParams.
func decodeParams(method string, params json.RawMessage, v any) error {
	if len(params) == 0 || string(params) == "null" {
		return jsonrpc2.NewError(jsonrpc2.InvalidParams, method+": missing params")
	}
	if err := wire.Decode(params, v); err != nil {
		return jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("%s: invalid params: %v", method, err))
	}
	return nil
}

// invalidParams returns a -32602 error.
func invalidParams(format string, args ...any) error {
	return jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf(format, args...))
}

// requestError maps a core error to the JSON-RPC error of CONTRACT §5:
// cancellation → -32800 with data.code SESSION_REFERENCE_CANCELLED, a dsh
// SessionReferenceError → -32803 with data.code, a JSON-RPC error as is,
// anything else → -32603 InternalError.
func requestError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var wire *jsonrpc2.Error
	if errors.As(err, &wire) {
		return wire
	}
	code := reference.CodeOf(err)
	if code == reference.CodeCancelled || errors.Is(err, context.Canceled) || ctx.Err() != nil {
		msg := "session reference preparation was cancelled"
		if code == reference.CodeCancelled {
			msg = err.Error()
		}
		return &jsonrpc2.Error{Code: codeRequestCancelled, Message: msg, Data: errorData(reference.CodeCancelled)}
	}
	if code == "" {
		return jsonrpc2.NewError(jsonrpc2.InternalError, err.Error())
	}
	return &jsonrpc2.Error{Code: codeRequestFailed, Message: err.Error(), Data: errorData(code)}
}

func errorData(code reference.Code) jsonrpc2.RawMessage {
	b, _ := jsjson.Marshal(map[string]string{"code": string(code)})
	return b
}

// notify sends a notification to the client, logging failures.
func (s *Server) notify(method string, params any) {
	if s.conn == nil {
		return
	}
	if err := s.conn.Notify(s.ctx, method, params); err != nil {
		s.logger.Debug("notify failed", "method", method, "error", err)
	}
}

// showMessage shows a message in the client's UI.
func (s *Server) showMessage(typ protocol.MessageType, msg string) {
	s.notify("window/showMessage", protocol.ShowMessageParams{Type: typ, Message: msg})
}
