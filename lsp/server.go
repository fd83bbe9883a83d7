// Package lsp is the dsh-lsp language server: session-mention completion,
// diagnostics, hover, quick fixes and prompt preparation over LSP 3.17.
//
// Layout follows gopls: server.go wires the connection and dispatches
// methods; each feature lives in its own file (lifecycle.go, text.go,
// completion.go, diagnostics.go, hover.go, codeaction.go, command.go,
// dsh.go for the dsh/* methods, config.go, progress.go). Wire types are in
// the lsp/protocol subpackage.
//
// Concurrency: jsonrpc2 runs a handler inline on the connection's read
// goroutine. Notifications (text sync, configuration, dsh/setTarget) are
// handled inline, so they are applied in wire order. Every request decodes
// its params and snapshots the state it needs inline, then releases the read
// loop with jsonrpc2.Async: long requests and server-to-client calls cannot
// deadlock the connection, later requests see earlier edits, and
// $/cancelRequest is observed while a request runs.
package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.lsp.dev/jsonrpc2"
	lspproto "go.lsp.dev/protocol"

	"github.com/dsh-lsp/dsh-lsp/lsp/position"
	"github.com/dsh-lsp/dsh-lsp/lsp/protocol"
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
	// fakes). Nil means sessionstore.OpenIndexed: listings and titles come
	// from an index of session metadata (persisted in the user cache
	// directory, outside the store), so completion does not parse logs
	// once the index is complete. A source that implements
	// reference.Index is used as a background index (while its first pass
	// runs, listings come from its partial snapshot: lsp/index.go); any
	// other source is complete from the start. A source that implements
	// reference.ChangeTracker keys the server's caches by its generation
	// and re-publishes diagnostics when it changes (lsp/fresh.go).
	OpenSource func(root string) (reference.Source, error)
	// ResolveRoot resolves the store root from a flag/setting value (empty:
	// $DSH_HOME/sessions or ~/.dsh/sessions). Nil means
	// sessionstore.ResolveRoot.
	ResolveRoot func(flag string) (string, error)
	// Version is reported in serverInfo.
	Version string
	// DiagnosticsDelay is the debounce before diagnostics are computed after
	// an edit; 0 means 150ms.
	DiagnosticsDelay time.Duration
	// MaxConcurrentReads bounds the requests that read whole sessions
	// (prepare, hover, completionItem/resolve) running at once; more wait
	// in a queue, cancellable. 0 means GOMAXPROCS-1 (at least 1).
	MaxConcurrentReads int
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

	// sources are the session sources opened so far, by store root;
	// closed when the session ends (a request may still use a replaced
	// one).
	sources map[string]reference.Source
	// progress reports indexing progress while a $/progress token is open.
	progress atomic.Pointer[func(done, total int)]

	diag  diagnosticsScheduler
	known knownCache
	cache candidateCache
	// reads limits the requests that read whole sessions (prepare, hover,
	// completionItem/resolve); renders caches hover and resolve answers
	// and surfaces the sessions read, per session version
	// (backpressure.go).
	reads    *limiter
	renders  renderCache
	surfaces surfaceCache
	prepared prepareCache
	// readSlots bounds the session reads running at once (the reads of
	// one prepare included).
	readSlots chan struct{}
	bg        sync.WaitGroup // background goroutines (diagnostics, progress)
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
		sources:        make(map[string]reference.Source),
		reads:          newLimiter(readConcurrency(opts.MaxConcurrentReads)),
		readSlots:      make(chan struct{}, readConcurrency(opts.MaxConcurrentReads)),
	}
}

// Serve runs the LSP session over stream until the client sends exit or
// disconnects, and returns the process exit code LSP prescribes: 0 after
// shutdown+exit, 1 otherwise (exit without shutdown, or a lost client).
func (s *Server) Serve(ctx context.Context, stream jsonrpc2.Stream) int {
	ctx = lspproto.WithLogger(ctx, s.logger)
	s.ctx, s.cancel = context.WithCancel(ctx)
	eof := make(chan struct{})
	ws := &watchedStream{Stream: stream, eof: eof}
	s.conn = jsonrpc2.NewConn(ws, jsonrpc2.WithCodec(protocol.Codec{}))
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

	s.mu.Lock()
	defer s.mu.Unlock()
	for _, src := range s.sources {
		if c, ok := src.(io.Closer); ok {
			c.Close()
		}
	}
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
			if _, err = w.Stream.Write(ctx, jsonrpc2.NewResponse(jsonrpc2.ID{}, nil, bad)); err == nil {
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

// requestHandler answers one request. It runs inline on the read loop until
// it calls jsonrpc2.Async.
type requestHandler func(s *Server, ctx context.Context, params json.RawMessage) (any, error)

// notificationHandler handles one notification inline.
type notificationHandler func(s *Server, ctx context.Context, params json.RawMessage)

var requestHandlers = map[string]requestHandler{
	"initialize":               (*Server).initialize,
	"shutdown":                 (*Server).shutdown,
	"textDocument/completion":  (*Server).completion,
	"completionItem/resolve":   (*Server).completionResolve,
	"textDocument/hover":       (*Server).hover,
	"textDocument/codeAction":  (*Server).codeAction,
	"workspace/executeCommand": (*Server).executeCommand,
	"dsh/prepare":              (*Server).prepare,
	"dsh/candidates":           (*Server).dshCandidates,
}

var notificationHandlers = map[string]notificationHandler{
	"initialized":                         (*Server).initialized,
	"exit":                                (*Server).exit,
	"textDocument/didOpen":                (*Server).didOpen,
	"textDocument/didChange":              (*Server).didChange,
	"textDocument/didClose":               (*Server).didClose,
	"workspace/didChangeConfiguration":    (*Server).didChangeConfiguration,
	"workspace/didChangeWorkspaceFolders": (*Server).didChangeWorkspaceFolders,
	"dsh/setTarget":                       (*Server).setTarget,
}

// dispatch is the connection's handler. It handles $/cancelRequest itself
// rather than through jsonrpc2.CancelHandler: request contexts here derive
// from the connection-lifetime context, not from the pooled jsonrpc2
// request context (a context.WithCancel child of that pooled context can be
// touched by the runtime after the request is recycled).
func (s *Server) dispatch(rctx context.Context, req *jsonrpc2.Request) (any, error) {
	method := req.Method()
	params := json.RawMessage(req.Params())
	if method == lspproto.MethodCancelRequest {
		s.cancelRequest(params)
		return nil, nil
	}
	if !req.IsCall() {
		s.handleNotification(s.ctx, method, params)
		// A notification's error would fail the whole connection.
		return nil, nil
	}
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
	ctx = context.WithValue(ctx, releaseKey{}, func() { once.Do(func() { jsonrpc2.Async(rctx) }) })
	return s.handle(ctx, method, params)
}

type releaseKey struct{}

// release lets later messages be read while the current request runs (see
// the package comment). Handlers call it after snapshotting their inputs.
func release(ctx context.Context) {
	if f, ok := ctx.Value(releaseKey{}).(func()); ok {
		f()
	}
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
func (s *Server) handle(ctx context.Context, method string, params json.RawMessage) (any, error) {
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
	h := requestHandlers[method]
	if h == nil {
		return nil, jsonrpc2.NewError(jsonrpc2.MethodNotFound, "method not found: "+method)
	}
	start := time.Now()
	res, err := h(s, ctx, params)
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
		s.exit(ctx, params)
		return
	}
	if state == stateNew || state == stateShutdown {
		// LSP: notifications before initialize (other than exit) are dropped;
		// after shutdown only exit matters.
		s.logger.Debug("notification dropped", "method", method, "state", state)
		return
	}
	h := notificationHandlers[method]
	if h == nil {
		if !strings.HasPrefix(method, "$/") {
			s.logger.Debug("notification ignored", "method", method)
		}
		return
	}
	h(s, ctx, params)
}

// decodeParams decodes params into v, mapping failures to InvalidParams.
func decodeParams(method string, params json.RawMessage, v any) error {
	if len(params) == 0 || string(params) == "null" {
		return jsonrpc2.NewError(jsonrpc2.InvalidParams, method+": missing params")
	}
	if err := json.Unmarshal(params, v); err != nil {
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
	b, _ := protocol.Marshal(map[string]string{"code": string(code)})
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
func (s *Server) showMessage(typ int, msg string) {
	s.notify("window/showMessage", protocol.ShowMessageParams{Type: typ, Message: msg})
}
