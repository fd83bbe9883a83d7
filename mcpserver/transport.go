package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxLineBytes bounds one line of the stdio transport (the SDK's default
// frame bound); a longer line is answered with a parse error and skipped.
const maxLineBytes = mcp.DefaultMaxLineLength

// JSON-RPC 2.0 error codes of a line that is not a message.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// StdioTransport is the MCP server's transport over a byte stream:
// newline-delimited JSON-RPC, as the SDK's IOTransport, except that a line
// that is not a JSON-RPC message does not end the session. The SDK's
// transport reads the stream with one JSON decoder and stops at the first
// malformed value; here each line is checked first, and one that is not
// JSON is answered with a -32700 parse error, one that is JSON but not a
// request, notification or response (an empty batch, an object id, a
// jsonrpc version other than "2.0", ...) with -32600 invalid request, both
// with id null as JSON-RPC 2.0 specifies when the id cannot be read, and
// reading goes on with the next line. Blank lines are skipped.
type StdioTransport struct {
	// In is read until EOF; Out receives every message, one per line.
	In  io.ReadCloser
	Out io.Writer
}

// Connect implements mcp.Transport.
func (t *StdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	out := &lineWriter{w: t.Out}
	pr, pw := io.Pipe()
	go filterLines(t.In, out, pw)
	inner := &mcp.IOTransport{Reader: filteredReader{pr, t.In}, Writer: out, MaxLineLength: -1}
	return inner.Connect(ctx)
}

// lineWriter serialises whole writes: the SDK writes each message (with
// its newline) in one Write, and so does filterLines, so lines never
// interleave.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Close leaves the underlying writer open (stdout outlives the session).
func (l *lineWriter) Close() error { return nil }

// filteredReader is what the SDK reads: the checked lines. Closing it
// closes the input too, which ends filterLines.
type filteredReader struct {
	*io.PipeReader
	in io.Closer
}

func (r filteredReader) Close() error {
	r.PipeReader.Close()
	return r.in.Close()
}

// filterLines copies the JSON-RPC messages of in to pw, one per line, and
// answers every other non-blank line on out (see StdioTransport).
func filterLines(in io.Reader, out io.Writer, pw *io.PipeWriter) {
	br := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		tooLong := false
		line = append(line[:0], chunk...)
		for errors.Is(err, bufio.ErrBufferFull) {
			chunk, err = br.ReadSlice('\n')
			if !tooLong && len(line)+len(chunk) > maxLineBytes {
				tooLong = true
				line = line[:0]
			}
			if !tooLong {
				line = append(line, chunk...)
			}
		}
		if err != nil && !errors.Is(err, io.EOF) {
			pw.CloseWithError(err)
			return
		}
		if tooLong {
			if !answerLine(out, codeParseError, fmt.Sprintf("Parse error: a line longer than %d bytes was skipped", maxLineBytes)) {
				pw.Close()
				return
			}
		} else if msg := bytes.TrimSpace(line); len(msg) > 0 {
			if code, why := checkMessage(msg); code != 0 {
				if !answerLine(out, code, why) {
					pw.Close()
					return
				}
			} else if _, werr := pw.Write(append(msg, '\n')); werr != nil {
				return // the session ended
			}
		}
		if err != nil { // EOF
			pw.Close()
			return
		}
	}
}

// checkMessage returns 0 for a line the SDK accepts as a message (or a
// batch of them), else the JSON-RPC error code and message to answer.
func checkMessage(line []byte) (int, string) {
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v)
		return codeParseError, "Parse error: the line is not JSON" + detail(err)
	}
	if line[0] == '[' {
		var batch []json.RawMessage
		if err := json.Unmarshal(line, &batch); err != nil || len(batch) == 0 {
			return codeInvalidRequest, "Invalid Request: an empty batch"
		}
		for _, m := range batch {
			if _, err := jsonrpc.DecodeMessage(m); err != nil {
				return codeInvalidRequest, "Invalid Request: a batch element is not a JSON-RPC 2.0 message" + detail(err)
			}
		}
		return 0, ""
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		return codeInvalidRequest, "Invalid Request: not a JSON-RPC 2.0 request, notification or response" + detail(err)
	}
	return 0, ""
}

// detail is ": " and err's text, cut to a bounded length at a character
// boundary, or "" without an error.
func detail(err error) string {
	if err == nil {
		return ""
	}
	msg := strings.ToValidUTF8(err.Error(), "\uFFFD")
	if len(msg) > 200 {
		cut := 200
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return " (" + msg + ")"
}

// answerLine writes a JSON-RPC error response with id null; false when the
// output failed (the session is over).
func answerLine(out io.Writer, code int, message string) bool {
	b, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      nil,
		"error":   map[string]any{"code": code, "message": message},
	})
	if err != nil {
		return false
	}
	_, err = out.Write(append(b, '\n'))
	return err == nil
}
