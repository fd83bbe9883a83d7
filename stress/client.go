package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.lsp.dev/jsonrpc2"
)

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%d %s %s", e.Code, e.Message, e.Data) }

// response is a JSON-RPC response.
type response struct {
	Result json.RawMessage
	Err    *rpcError
}

// client is a minimal LSP client over a byte stream. It chooses its own
// request ids (so that $/cancelRequest can name a request before its answer
// arrives), answers server-to-client requests with null, and ignores
// notifications.
type client struct {
	wmu sync.Mutex
	w   io.Writer

	mu      sync.Mutex
	pending map[int64]chan response
	next    atomic.Int64
	closed  chan struct{}
	readErr error
}

func newClient(r io.Reader, w io.Writer) *client {
	c := &client{w: w, pending: map[int64]chan response{}, closed: make(chan struct{})}
	go c.readLoop(r)
	return c
}

func (c *client) write(body []byte) error {
	frame := append([]byte("Content-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"), body...)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(frame)
	return err
}

// start sends a request and returns its id and the channel its answer
// arrives on (closed without a value when the connection ends).
func (c *client) start(method string, params any) (int64, <-chan response, error) {
	id := c.next.Add(1)
	ch := make(chan response, 1)
	c.mu.Lock()
	c.pending[id] = ch
	c.mu.Unlock()
	p, err := json.Marshal(params)
	if err != nil {
		return 0, nil, err
	}
	body := `{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) + `,"method":` + strconv.Quote(method) + `,"params":` + string(p) + `}`
	if err := c.write([]byte(body)); err != nil {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return 0, nil, err
	}
	return id, ch, nil
}

// call sends a request and waits for its answer.
func (c *client) call(method string, params any, result any) error {
	_, ch, err := c.start(method, params)
	if err != nil {
		return err
	}
	r, ok := <-ch
	if !ok {
		return fmt.Errorf("%s: connection closed (%v)", method, c.readErr)
	}
	if r.Err != nil {
		return r.Err
	}
	if result != nil {
		return json.Unmarshal(r.Result, result)
	}
	return nil
}

// callTimeout is call with a deadline.
func (c *client) callTimeout(limit time.Duration, method string, params any, result any) error {
	done := make(chan error, 1)
	go func() { done <- c.call(method, params, result) }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		return fmt.Errorf("%s: no answer within %v", method, limit)
	}
}

func (c *client) notify(method string, params any) error {
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	return c.write([]byte(`{"jsonrpc":"2.0","method":` + strconv.Quote(method) + `,"params":` + string(p) + `}`))
}

func (c *client) readLoop(r io.Reader) {
	defer func() {
		c.mu.Lock()
		for id, ch := range c.pending {
			close(ch)
			delete(c.pending, id)
		}
		c.mu.Unlock()
		close(c.closed)
	}()
	br := bufio.NewReaderSize(r, 1<<16)
	for {
		n := -1
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				c.readErr = err
				return
			}
			line = strings.TrimRight(line, "\r\n")
			if line == "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				n, _ = strconv.Atoi(v)
			}
		}
		if n < 0 {
			c.readErr = fmt.Errorf("frame without Content-Length")
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(br, body); err != nil {
			c.readErr = err
			return
		}
		// jsonrpc2's scanner: the client must not be the bottleneck of
		// the load test (encoding/json on 50-item completion lists was).
		msg, err := jsonrpc2.DecodeMessage(body)
		if err != nil {
			c.readErr = fmt.Errorf("server sent an invalid message %q: %w", body, err)
			return
		}
		switch m := msg.(type) {
		case *jsonrpc2.Call:
			var idJSON string
			if n, ok := m.ID().Number(); ok {
				idJSON = strconv.FormatInt(n, 10)
			} else {
				str, _ := m.ID().StringValue()
				idJSON = strconv.Quote(str)
			}
			go c.write([]byte(`{"jsonrpc":"2.0","id":` + idJSON + `,"result":null}`))
		case *jsonrpc2.Response:
			id, ok := m.ID().Number()
			if !ok {
				continue
			}
			c.mu.Lock()
			ch := c.pending[id]
			delete(c.pending, id)
			c.mu.Unlock()
			if ch == nil {
				continue
			}
			r := response{Result: append(json.RawMessage(nil), m.Result()...)}
			var we *jsonrpc2.Error
			if errors.As(m.Err(), &we) {
				r.Err = &rpcError{Code: int(we.Code), Message: we.Message, Data: json.RawMessage(we.Data)}
			} else if m.Err() != nil {
				r.Err = &rpcError{Code: -1, Message: m.Err().Error()}
			}
			ch <- r
		}
	}
}

// initialize runs the LSP handshake with settings as initializationOptions.
func (c *client) initialize(settings map[string]any) error {
	params := map[string]any{
		"processId": nil, "rootUri": "file:///home/alice/work/project-000",
		"capabilities":          map[string]any{"general": map[string]any{"positionEncodings": []string{"utf-8"}}},
		"initializationOptions": settings,
	}
	if err := c.call("initialize", params, nil); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	return c.notify("initialized", map[string]any{})
}

func (c *client) open(uri, text string) error {
	return c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": "dsh", "version": 1, "text": text}})
}
