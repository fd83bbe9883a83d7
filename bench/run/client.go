package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// server is one dsh-lsp process driven over stdio with Content-Length
// framed JSON-RPC.
type server struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	started time.Time

	mu      sync.Mutex
	nextID  int
	pending map[int]chan rpcMessage
	// progress counts $/progress notifications received; progressBegin
	// and progressEnd are when the first begin / last end arrived.
	progress      int
	progressBegin time.Time
	progressEnd   time.Time
	dead          chan struct{}
	readErr       error
}

type rpcMessage struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data,omitempty"`
	} `json:"error,omitempty"`
}

// startServer spawns bin with args, its XDG cache at cacheDir, stderr to
// logPath.
func startServer(bin string, args []string, cacheDir, logPath string) (*server, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cacheDir)
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd.Stderr = logf
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, stdin: stdin, pending: map[int]chan rpcMessage{}, dead: make(chan struct{})}
	s.started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		s.readLoop(bufio.NewReaderSize(stdout, 1<<20))
		logf.Close()
	}()
	return s, nil
}

func (s *server) readLoop(r *bufio.Reader) {
	defer close(s.dead)
	for {
		length := -1
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				s.readErr = err
				return
			}
			line = strings.TrimRight(line, "\r\n")
			if line == "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				length, _ = strconv.Atoi(v)
			}
		}
		if length < 0 {
			s.readErr = fmt.Errorf("message without Content-Length")
			return
		}
		body := make([]byte, length)
		if _, err := io.ReadFull(r, body); err != nil {
			s.readErr = err
			return
		}
		var msg rpcMessage
		if err := json.Unmarshal(body, &msg); err != nil {
			s.readErr = err
			return
		}
		switch {
		case msg.Method != "" && msg.ID != nil:
			// A server-to-client request (workDoneProgress/create,
			// configuration, registerCapability): answer null.
			s.send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": nil})
		case msg.Method != "":
			if msg.Method == "$/progress" {
				var p struct {
					Value struct {
						Kind string `json:"kind"`
					} `json:"value"`
				}
				json.Unmarshal(msg.Params, &p)
				s.mu.Lock()
				s.progress++
				switch p.Value.Kind {
				case "begin":
					if s.progressBegin.IsZero() {
						s.progressBegin = time.Now()
					}
				case "end":
					s.progressEnd = time.Now()
				}
				s.mu.Unlock()
			}
		default:
			id, _ := strconv.Atoi(string(msg.ID))
			s.mu.Lock()
			ch := s.pending[id]
			delete(s.pending, id)
			s.mu.Unlock()
			if ch != nil {
				ch <- msg
			}
		}
	}
}

func (s *server) send(v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n", len(body))
	b.Write(body)
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err = s.stdin.Write(b.Bytes())
	return err
}

// call sends a request and waits for its response.
func (s *server) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	s.mu.Lock()
	s.nextID++
	id := s.nextID
	ch := make(chan rpcMessage, 1)
	s.pending[id] = ch
	s.mu.Unlock()
	if err := s.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return nil, err
	}
	select {
	case msg := <-ch:
		if msg.Error != nil {
			return nil, fmt.Errorf("%s: error %d: %s %s", method, msg.Error.Code, msg.Error.Message, msg.Error.Data)
		}
		return msg.Result, nil
	case <-s.dead:
		return nil, fmt.Errorf("%s: server exited: %v", method, s.readErr)
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

func (s *server) notify(method string, params any) error {
	return s.send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// initialize runs the initialize handshake with sessionsDir and target
// cwd as initializationOptions.
func (s *server) initialize(ctx context.Context, sessionsDir, targetCWD string) error {
	_, err := s.call(ctx, "initialize", map[string]any{
		"processId": os.Getpid(),
		"rootUri":   nil,
		"capabilities": map[string]any{
			"window":       map[string]any{"workDoneProgress": true},
			"textDocument": map[string]any{"completion": map[string]any{"completionItem": map[string]any{"snippetSupport": true}}},
		},
		"initializationOptions": map[string]any{
			"sessionsDir": sessionsDir,
			"target":      map[string]any{"cwd": targetCWD},
		},
	})
	if err != nil {
		return err
	}
	return s.notify("initialized", map[string]any{})
}

// open opens an in-memory document.
func (s *server) open(uri, text string) error {
	return s.notify("textDocument/didOpen", map[string]any{
		"textDocument": map[string]any{"uri": uri, "languageId": "markdown", "version": 1, "text": text},
	})
}

// completion asks for completion at (line, character) and returns the
// item count and isIncomplete.
func (s *server) completion(ctx context.Context, uri string, line, char int) (int, bool, error) {
	res, err := s.call(ctx, "textDocument/completion", map[string]any{
		"textDocument": map[string]any{"uri": uri},
		"position":     map[string]any{"line": line, "character": char},
	})
	if err != nil {
		return 0, false, err
	}
	var list struct {
		IsIncomplete bool              `json:"isIncomplete"`
		Items        []json.RawMessage `json:"items"`
	}
	if len(res) > 0 && res[0] == '[' {
		err = json.Unmarshal(res, &list.Items)
	} else if string(res) != "null" {
		err = json.Unmarshal(res, &list)
	}
	return len(list.Items), list.IsIncomplete, err
}

// contentReady returns once the server's content index is in step with
// the store: dsh/search syncs it before answering.
func (s *server) contentReady(ctx context.Context) error {
	_, err := s.call(ctx, "dsh/search", map[string]any{"query": "proj", "limit": 1})
	return err
}

// peakRSS returns the process's VmHWM in bytes (Linux).
func (s *server) peakRSS() int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return -1
}

// cpuTime returns the process's user + system CPU time (Linux; clock
// ticks of 10 ms), or -1.
func (s *server) cpuTime() time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return -1
	}
	// The fields after the command name (which may hold spaces) start
	// at the state, field 3: utime and stime are fields 14 and 15.
	i := strings.LastIndexByte(string(data), ')')
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		return -1
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * 10 * time.Millisecond
}

// stop asks the server to shut down and exit, and kills it when it has
// not exited 5 s later. It returns how long the exit took and whether
// the server had to be killed (a kill can lose what it was persisting,
// which the next start then pays for).
func (s *server) stop() (took time.Duration, killed bool) {
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.call(ctx, "shutdown", nil)
	s.notify("exit", nil)
	s.stdin.Close()
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
		<-done
		killed = true
	}
	return time.Since(t0), killed
}
