package lsp_test

// Framing versus message errors: a well-framed message that is not a valid
// JSON-RPC message is answered with an error response (id null) and the
// connection keeps serving; a broken frame ends the connection with exit
// code 1. These tests drive the real server over in-memory pipes with raw
// LSP frames.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/dsh-lsp/dsh-lsp/lsp"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/storetest"
)

// framingStore is the read-only real-format fixture store.
const framingStore = "../testdata/fixtures/store-raw"

// framingHang bounds each run: it only turns a hang into a failure.
const framingHang = 30 * time.Second

// frame frames body with a Content-Length header.
func frame(body string) string {
	return "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}

var (
	framingInit = frame(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"processId":null,"capabilities":{},"initializationOptions":{"sessionsDir":"`+framingStore+`"}}}`) +
		frame(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	framingProbe = frame(`{"jsonrpc":"2.0","id":"probe","method":"dsh/candidates","params":{"query":"renaming"}}`)
	framingEnd   = frame(`{"jsonrpc":"2.0","id":"shutdown","method":"shutdown"}`) +
		frame(`{"jsonrpc":"2.0","method":"exit"}`)
)

// framedReply is one message the server wrote (see wireMessage).
type framedReply = wireMessage

// pipeEnds joins the ends of two pipes into the server's connection.
type pipeEnds struct {
	*io.PipeReader
	*io.PipeWriter
}

func (p pipeEnds) Close() error {
	p.PipeReader.Close()
	return p.PipeWriter.Close()
}

// framingRun is what one server run produced.
type framingRun struct {
	exitCode int
	replies  []framedReply // responses, in wire order (notifications dropped)
}

// framingStep is input the client writes; with await set, the client then
// waits for the response with that JSON id before writing the next step.
type framingStep struct {
	data  string
	await string
}

// runFramed plays steps against a fresh server and returns its responses
// and exit code. With closeInput the client closes its end after the last
// step; otherwise the connection stays open and the server must end it
// (exit, or a broken frame).
func runFramed(t *testing.T, steps []framingStep, closeInput bool) framingRun {
	t.Helper()
	return runFramedOn(t, steps, closeInput, func(s jsonrpc2.Stream) jsonrpc2.Stream { return s })
}

// opaqueStream hides the ReadFrame method of jsonrpc2's own streams, as a
// wrapping Stream does.
type opaqueStream struct{ jsonrpc2.Stream }

// runFramedOn is runFramed with the server's header stream wrapped by wrap.
func runFramedOn(t *testing.T, steps []framingStep, closeInput bool, wrap func(jsonrpc2.Stream) jsonrpc2.Stream) framingRun {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := lsp.New(lsp.Options{
		ResolveRoot: func(string) (string, error) { return framingStore, nil },
		OpenSource:  func(root string) (lsp.Source, error) { return storetest.OpenSynced(root, 0) },
	})
	done := make(chan int, 1)
	go func() { done <- srv.Serve(context.Background(), wrap(jsonrpc2.NewHeaderStream(pipeEnds{inR, outW}))) }()

	replies := make(chan framedReply, 1024)
	outputErr := make(chan error, 1)
	go func() {
		err := readReplies(outR, func(m framedReply) { replies <- m })
		io.Copy(io.Discard, outR)
		close(replies)
		outputErr <- err
	}()
	proceed := make(chan bool)
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		for _, st := range steps {
			if _, err := io.WriteString(inW, st.data); err != nil {
				return
			}
			if st.await != "" && !<-proceed {
				return
			}
		}
		if closeInput {
			inW.Close()
		}
	}()

	var run framingRun
	hang := time.After(framingHang)
	fail := func(what string) {
		inW.Close()
		outR.Close()
		t.Fatalf("%s within %v (steps %.300q)", what, framingHang, steps)
	}
	// collect records replies until one has the JSON id until (none: until
	// the output ends) and reports whether it arrived.
	collect := func(until string) bool {
		for {
			select {
			case m, ok := <-replies:
				if !ok {
					return false
				}
				run.replies = append(run.replies, m)
				if until != "" && string(m.ID) == until {
					return true
				}
			case <-hang:
				fail("the server neither answered " + until + " nor ended the connection")
			}
		}
	}
	for _, st := range steps {
		if st.await == "" {
			continue
		}
		if !collect(st.await) {
			break
		}
		select {
		case proceed <- true:
		case <-writerDone:
		}
	}
	close(proceed)
	collect("")
	select {
	case run.exitCode = <-done:
	case <-hang:
		fail("Serve did not return")
	}
	inW.Close() // unblocks the writer if the server stopped reading early
	<-writerDone
	if err := <-outputErr; err != nil {
		t.Fatalf("server output: %v", err)
	}
	return run
}

// readReplies parses the server's frames until EOF, passing on the
// responses.
func readReplies(r io.Reader, got func(framedReply)) error {
	return readServerFrames(r, func(m wireMessage, _ []byte) {
		if m.Method == "" {
			got(m)
		}
	})
}

// reply returns the response with the given JSON id.
func (r framingRun) reply(id string) (framedReply, bool) {
	for _, m := range r.replies {
		if string(m.ID) == id {
			return m, true
		}
	}
	return framedReply{}, false
}

// nullIDErrors returns the codes of the error responses with id null, in
// wire order.
func (r framingRun) nullIDErrors() []int {
	var codes []int
	for _, m := range r.replies {
		if string(m.ID) == "null" && m.Error != nil {
			codes = append(codes, m.Error.Code)
		}
	}
	return codes
}

// servedAfter is a session that sends input between initialize and a
// dsh/candidates probe, waits for the probe's answer, then shuts down.
func servedAfter(input string) []framingStep {
	return []framingStep{{framingInit, `"init"`}, {input + framingProbe, `"probe"`}, {framingEnd, ""}}
}

// checkServedAfter asserts that the probe and shutdown sent after the bad
// messages were answered normally and the session ended cleanly.
func checkServedAfter(t *testing.T, run framingRun) {
	t.Helper()
	probe, ok := run.reply(`"probe"`)
	if !ok || probe.Error != nil {
		t.Fatalf("dsh/candidates after the bad messages: reply %+v (found %v); want a result", probe, ok)
	}
	var items []reference.CandidateItem
	if err := json.Unmarshal(probe.Result, &items); err != nil || len(items) != 1 || items[0].SessionID != "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0001" {
		t.Errorf("dsh/candidates after the bad messages = %s (%v); want the one fixture session", probe.Result, err)
	}
	if sd, ok := run.reply(`"shutdown"`); !ok || sd.Error != nil {
		t.Errorf("shutdown after the bad messages: reply %+v (found %v); want a result", sd, ok)
	}
	if run.exitCode != 0 {
		t.Errorf("exit code %d after shutdown and exit; want 0", run.exitCode)
	}
}

func TestMalformedMessageAnsweredAndConnectionKeepsServing(t *testing.T) {
	const (
		parseError     = -32700
		invalidRequest = -32600
	)
	call := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"dsh/candidates","params":{}}`
	}
	tests := []struct {
		name    string
		body    string
		want    int
		wantMsg string // in the error message: it says what is wrong
	}{
		{"not JSON", `not json`, parseError, `not valid JSON`},
		{"unterminated object", `{"jsonrpc":"2.0","id":1,`, parseError, `not valid JSON`},
		{"trailing content", call("1") + `{"x":1}`, parseError, `not valid JSON`},
		{"nesting too deep", strings.Repeat("[", 100000), parseError, `not valid JSON`},
		{"batch", `[` + call("1") + `,{"jsonrpc":"2.0","method":"initialized"}]`, invalidRequest, `batch`},
		{"empty batch", `[]`, invalidRequest, `batch`},
		{"number", `1`, invalidRequest, `not a JSON object`},
		{"null", `null`, invalidRequest, `not a JSON object`},
		{"id 1e400", call("1e400"), invalidRequest, `"id"`},
		{"id beyond int64", call("99999999999999999999999"), invalidRequest, `"id"`},
		{"id 1.5", call("1.5"), invalidRequest, `"id"`},
		{"id true", call("true"), invalidRequest, `"id"`},
		{"id object", call("{}"), invalidRequest, `"id"`},
		{"id array", call("[]"), invalidRequest, `"id"`},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":1,"method":"dsh/candidates"}`, invalidRequest, `"jsonrpc"`},
		{"no jsonrpc", `{"id":1,"method":"dsh/candidates"}`, invalidRequest, `"jsonrpc"`},
		{"method not a string", `{"jsonrpc":"2.0","id":1,"method":5}`, invalidRequest, `"method"`},
		{"method and result", `{"jsonrpc":"2.0","id":1,"method":"x","result":1}`, invalidRequest, `"result"`},
		{"neither method nor result", `{"jsonrpc":"2.0","id":1}`, invalidRequest, `neither`},
		{"bad error object", `{"jsonrpc":"2.0","id":7,"error":{"code":"x"}}`, invalidRequest, `neither`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := runFramed(t, servedAfter(frame(tt.body)), false)
			if got := run.nullIDErrors(); len(got) != 1 || got[0] != tt.want {
				t.Errorf("error responses with id null = %v; want [%d]", got, tt.want)
			}
			if m, _ := run.reply("null"); m.Error == nil || !strings.Contains(m.Error.Message, tt.wantMsg) {
				t.Errorf("error response %+v; want a message containing %q", m.Error, tt.wantMsg)
			}
			// The error answers the bad frame before the probe is read.
			if len(run.replies) < 2 || string(run.replies[1].ID) != "null" {
				t.Errorf("replies %+v; want the initialize result, then the error, then the rest", run.replies)
			}
			checkServedAfter(t, run)
		})
	}
}

// TestMalformedMessageThroughWrappedStream: a Stream without raw frame access
// (a wrapper) still gets undecodable messages answered, with jsonrpc2's own
// classification of the body.
func TestMalformedMessageThroughWrappedStream(t *testing.T) {
	tests := []struct {
		name string
		body string
		want int
	}{
		{"not JSON", `not json`, -32700},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"dsh/candidates"}]`, -32600},
		{"id 1e400", `{"jsonrpc":"2.0","id":1e400,"method":"dsh/candidates"}`, -32600},
		{"id true", `{"jsonrpc":"2.0","id":true,"method":"dsh/candidates"}`, -32600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := runFramedOn(t, servedAfter(frame(tt.body)), false, func(s jsonrpc2.Stream) jsonrpc2.Stream { return opaqueStream{s} })
			if got := run.nullIDErrors(); len(got) != 1 || got[0] != tt.want {
				t.Errorf("error responses with id null = %v; want [%d]", got, tt.want)
			}
			checkServedAfter(t, run)
		})
	}
}

func TestManyMalformedMessagesOnOneConnection(t *testing.T) {
	bad := []string{`not json`, `[]`, `{"jsonrpc":"2.0","id":1.5,"method":"x"}`, `{`, `{"jsonrpc":"2.0","id":true,"method":"x"}`}
	var input strings.Builder
	for _, b := range bad {
		// Valid frames between the bad ones are read in step.
		input.WriteString(frame(b))
		input.WriteString(frame(`{"jsonrpc":"2.0","method":"$/setTrace","params":{"value":"off"}}`))
	}
	run := runFramed(t, servedAfter(input.String()), false)
	want := []int{-32700, -32600, -32600, -32700, -32600}
	if got := run.nullIDErrors(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("error responses with id null = %v; want %v", got, want)
	}
	checkServedAfter(t, run)
}

func TestBrokenFrameEndsConnection(t *testing.T) {
	tests := []struct {
		name       string
		input      string
		closeInput bool
	}{
		{"truncated body at EOF", "Content-Length: 60\r\n\r\n" + `{"jsonrpc":"2.0","id":"probe",`, true},
		{"truncated header at EOF", "Content-Length: 60\r\n", true},
		{"non-numeric Content-Length", "Content-Length: abc\r\n\r\n{}" + framingProbe, false},
		{"negative Content-Length", "Content-Length: -1\r\n\r\n{}" + framingProbe, false},
		{"missing Content-Length", "Content-Type: application/json\r\n\r\n{}" + framingProbe, false},
		{"header line without a colon", "no colon\r\n\r\n" + framingProbe, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := runFramed(t, []framingStep{{framingInit, `"init"`}, {tt.input, ""}}, tt.closeInput)
			if run.exitCode != 1 {
				t.Errorf("exit code %d; want 1 (connection lost without shutdown)", run.exitCode)
			}
			if init, ok := run.reply(`"init"`); !ok || init.Error != nil {
				t.Errorf("initialize before the broken frame: reply %+v (found %v); want a result", init, ok)
			}
			if got := run.nullIDErrors(); len(got) != 0 {
				t.Errorf("error responses with id null = %v; a broken frame is not answered", got)
			}
			if _, ok := run.reply(`"probe"`); ok {
				t.Errorf("the probe after a broken frame was answered; the framing cannot be resynchronised")
			}
		})
	}
}

func TestCleanEOFAfterMalformedMessage(t *testing.T) {
	// The client closes right after a bad frame: the error is answered and
	// the lost connection ends the session with exit code 1.
	run := runFramed(t, []framingStep{{framingInit, `"init"`}, {frame(`{"jsonrpc":"2.0","id":1e400,"method":"x"}`), ""}}, true)
	if got := run.nullIDErrors(); len(got) != 1 || got[0] != -32600 {
		t.Errorf("error responses with id null = %v; want [-32600]", got)
	}
	if run.exitCode != 1 {
		t.Errorf("exit code %d; want 1", run.exitCode)
	}
}
