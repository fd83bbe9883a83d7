package workload

import (
	"math/rand"
	"strconv"
	"unicode/utf8"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// SessionSpec describes one generated session.
type SessionSpec struct {
	ID string
	// CWD is "" for a session without a cwd (stored under _no-cwd).
	CWD       string
	CreatedAt int64
	// Turns is the number of user prompts (turns). 0 derives it from Size
	// (one turn per 32 KiB), or 8 when Size is 0 too.
	Turns int
	// Size is the target plaintext size of the log in bytes; 0 gives
	// natural sizes (1-6 KB of text per turn).
	Size int64
	// Multibyte is the share (0..1) of words that are non-ASCII.
	Multibyte float64
	// Compactions is the number of manual compactions (checkpoint
	// user/message with a replace surfaceOp) spread over the turns.
	Compactions int
	// OpenTail leaves the last turn open (no turn/end), as a crash or a
	// live session does, so readers append crash closers.
	OpenTail bool
	Seed     int64
}

// Session generates one session log batch by batch, in the current dsh
// format (spec §2): header, turn/start, user/message, assistant/chunk
// events with packed text-chunks / reasoning-chunks / tool-call-chunks
// rows, assistant/message, tool/call, tool/result, session/title, and
// compaction checkpoints with replace surfaceOps. Each batch is what dsh
// writes in one flush (one zstd frame): one turn, or one compaction.
type Session struct {
	spec  SessionSpec
	rng   *rand.Rand
	text  textGen
	seq   int64
	time  int64
	turn  int
	turns int
	// nodes is the folded surface (event seqs), kept to emit valid
	// replace operations.
	nodes     []int64
	written   int64
	compactAt map[int]bool
	title     string
	hasTitle  bool
	buf       []byte
}

// NewSession returns a generator for spec.
func NewSession(spec SessionSpec) *Session {
	rng := rand.New(rand.NewSource(spec.Seed))
	s := &Session{spec: spec, rng: rng, text: textGen{rng: rng, multibyte: spec.Multibyte}}
	s.turns = spec.Turns
	if s.turns <= 0 {
		if spec.Size > 0 {
			s.turns = int(spec.Size / 32768)
			if s.turns < 2 {
				s.turns = 2
			}
		} else {
			s.turns = 8
		}
	}
	s.compactAt = map[int]bool{}
	for k := 0; k < spec.Compactions; k++ {
		s.compactAt[(k+1)*s.turns/(spec.Compactions+1)] = true
	}
	s.time = spec.CreatedAt
	return s
}

// Spec returns the session's spec.
func (s *Session) Spec() SessionSpec { return s.spec }

// Header returns the header line, newline included.
func (s *Session) Header() []byte {
	b := []byte(`{"type":"session","version":0,"id":`)
	b = jsjson.AppendJSString(b, s.spec.ID, false)
	b = append(b, `,"createdAt":`...)
	b = strconv.AppendInt(b, s.spec.CreatedAt, 10)
	if s.spec.CWD != "" {
		b = append(b, `,"cwd":`...)
		b = jsjson.AppendJSString(b, s.spec.CWD, false)
	}
	b = append(b, `,"delegationDepth":0}`...)
	b = append(b, '\n')
	s.written += int64(len(b))
	return b
}

// LatestTitle returns the latest session/title written so far and whether
// there was one.
func (s *Session) LatestTitle() (string, bool) { return s.title, s.hasTitle }

// LastSeq returns the seq of the last event written, -1 before any.
func (s *Session) LastSeq() int64 { return s.seq - 1 }

// Surface returns the current folded surface (event seqs in surface
// order).
func (s *Session) Surface() []int64 { return append([]int64(nil), s.nodes...) }

// Written returns the plaintext bytes produced so far (header included).
func (s *Session) Written() int64 { return s.written }

// NextBatch returns the next flush batch (complete lines, each ending in
// "\n"), or nil when the session is complete. The returned slice is valid
// until the next call.
func (s *Session) NextBatch() []byte {
	if s.turn >= s.turns {
		return nil
	}
	s.buf = s.buf[:0]
	if s.compactAt[s.turn] && len(s.nodes) >= 6 {
		delete(s.compactAt, s.turn)
		s.compaction()
	} else {
		s.turn++
		s.emitTurn()
	}
	s.written += int64(len(s.buf))
	return s.buf
}

// budget returns the text bytes to spend on the next turn.
func (s *Session) budget() int {
	if s.spec.Size <= 0 {
		return 1000 + s.rng.Intn(5000)
	}
	left := s.turns - s.turn + 1
	per := (s.spec.Size - s.written) / int64(left)
	c := int((float64(per) - 2500) / 1.35)
	if c < 200 {
		c = 200
	}
	return c
}

func (s *Session) tick(ms int) int64 {
	s.time += int64(ms)
	return s.time
}

// begin starts an event line and returns its seq.
func (s *Session) begin(typ string, ms int) int64 {
	seq := s.seq
	s.seq++
	s.buf = append(s.buf, `{"type":"`...)
	s.buf = append(s.buf, typ...)
	s.buf = append(s.buf, `","seq":`...)
	s.buf = strconv.AppendInt(s.buf, seq, 10)
	s.buf = append(s.buf, `,"time":`...)
	s.buf = strconv.AppendInt(s.buf, s.tick(ms), 10)
	s.buf = append(s.buf, `,"data":`...)
	return seq
}

func (s *Session) end() { s.buf = append(s.buf, "}\n"...) }

func (s *Session) str(v string) { s.buf = jsjson.AppendJSString(s.buf, v, false) }

func (s *Session) num(v int64) { s.buf = strconv.AppendInt(s.buf, v, 10) }

func (s *Session) raw(v string) { s.buf = append(s.buf, v...) }

func (s *Session) seqs(v []int64) {
	s.buf = append(s.buf, '[')
	for i, n := range v {
		if i > 0 {
			s.buf = append(s.buf, ',')
		}
		s.buf = strconv.AppendInt(s.buf, n, 10)
	}
	s.buf = append(s.buf, ']')
}

// turnStep writes {"turn":T,"step":S.
func (s *Session) turnStep(step int) {
	s.raw(`{"turn":`)
	s.num(int64(s.turn))
	s.raw(`,"step":`)
	s.num(int64(step))
}

func (s *Session) simple(typ string, step int) {
	s.begin(typ, 1)
	s.turnStep(step)
	s.raw("}")
	s.end()
}

func (s *Session) userMessage(text, id string) {
	s.raw(`{"content":[{"type":"text","text":`)
	s.str(text)
	s.raw(`}],"source":{"kind":"user"},"role":"user","id":`)
	s.str(id)
	s.raw("}")
}

func (s *Session) emitTurn() {
	c := s.budget()
	tool := s.rng.Intn(2) == 0
	reasoning := s.rng.Intn(3) == 0
	userText := s.text.text(max(20, c/20))
	var answer, toolOut string
	if tool {
		answer = s.text.text(max(20, c/5))
		toolOut = s.text.text(max(20, c*35/100))
	} else {
		answer = s.text.text(max(20, c*3/10))
	}
	userID := uuid(s.rng)

	s.begin("agent/inbox/spliced", 1000+s.rng.Intn(60000))
	s.raw(`{"target":"next-turn","start":0,"inserted":[`)
	s.userMessage(userText, userID)
	s.raw("]}")
	s.end()
	s.begin("turn/start", 1)
	s.raw(`{"turn":`)
	s.num(int64(s.turn))
	s.raw("}")
	s.end()
	s.begin("agent/inbox/spliced", 1)
	s.raw(`{"target":"next-turn","start":0,"removedCount":1,"inserted":[]}`)
	s.end()
	s.simple("step/start", 1)
	seq := s.begin("user/message", 1)
	s.userMessage(userText, userID)
	s.raw(`,"surfaceOp":"append"`)
	s.end()
	s.nodes = append(s.nodes, seq)
	if s.turn == 1 {
		ctxText := "Current runtime context. This snapshot supersedes earlier runtime-context snapshots.\n\nCurrent DSH file policy: workspace-write."
		seq := s.begin("user/message", 1)
		s.raw(`{"content":[{"type":"text","text":`)
		s.str(ctxText)
		s.raw(`}],"source":{"kind":"plugin","plugin":"@deepseek-ai/dsh-system-prompt","form":"snapshot","sections":[{"name":"runtime-context","text":`)
		s.str(ctxText)
		s.raw(`}]},"role":"user","id":`)
		s.str(uuid(s.rng))
		s.raw(`},"surfaceOp":"append"`)
		s.end()
		s.nodes = append(s.nodes, seq)
		fallback := userText
		if len(fallback) > 40 {
			fallback = fallback[:40]
			for len(fallback) > 0 && !utf8.ValidString(fallback) {
				fallback = fallback[:len(fallback)-1]
			}
		}
		s.titleEvent(fallback, seq-1, `{"kind":"fallback"}`)
		s.begin("request/header", 1)
		s.raw(`{"header":{"config":{"provider":"deepseek-official","model":"deepseek-v4-flash"},"system":"You are a coding agent."},"reason":"initial"}`)
		s.end()
		s.begin("request/context", 1)
		s.raw(`{"provider":"deepseek-official","model":"deepseek-v4-flash","contextWindow":128000}`)
		s.end()
	}
	if tool {
		callID := "call_" + uuid(s.rng)[:8]
		args := `{"command":"grep -rn TODO src | head -n 200"}`
		var reasoningText string
		if reasoning {
			reasoningText = s.text.text(max(20, c/30))
		}
		lead := s.text.text(max(10, c/40))
		chunkSeqs, _ := s.stream(1, reasoningText, lead, callID, args, "tool-calls")
		seq := s.beginAssistant(1, reasoningText, reasoning)
		s.str(lead)
		s.raw(`},{"type":"tool-call","id":`)
		s.str(callID)
		s.raw(`,"name":"bash","arguments":`)
		s.str(args)
		s.endAssistant(seq, `{"inputTokens":1200,"outputTokens":60}`, chunkSeqs)
		callSeq := s.begin("tool/call", 1)
		s.turnStep(1)
		s.raw(`,"callId":`)
		s.str(callID)
		s.raw(`,"name":"bash","arguments":`)
		s.str(args)
		s.raw("}")
		s.end()
		resSeq := s.begin("tool/result", 120)
		s.turnStep(1)
		s.raw(`,"message":{"source":{"kind":"tool","callId":`)
		s.str(callID)
		s.raw(`},"content":[{"type":"tool-result","toolCallId":`)
		s.str(callID)
		s.raw(`,"content":[{"type":"text","text":`)
		s.str(toolOut)
		s.raw(`}],"isError":false}],"role":"user","id":`)
		s.str(uuid(s.rng))
		s.raw(`}},"sourceEventSeqs":[`)
		s.num(callSeq)
		s.raw(`],"surfaceOp":"append"}` + "\n")
		s.nodes = append(s.nodes, resSeq)
		s.simple("step/end", 1)
		s.simple("step/start", 2)
		s.answer(2, "", answer)
		s.simple("step/end", 2)
	} else {
		var reasoningText string
		if reasoning {
			reasoningText = s.text.text(max(20, c/30))
		}
		s.answer(1, reasoningText, answer)
		s.simple("step/end", 1)
	}
	if s.spec.OpenTail && s.turn == s.turns {
		return // a crash: no turn/end
	}
	s.begin("turn/end", 1)
	s.raw(`{"turn":`)
	s.num(int64(s.turn))
	s.raw(`,"reason":{"kind":"completed"}}`)
	s.end()
	if s.turn == 2 || s.turn%25 == 0 {
		s.titleEvent(s.text.title(), s.nodes[0], `{"kind":"provider","provider":"session-title-first-prompt-llm","model":{"provider":"deepseek-official","model":"deepseek-v4-flash"}}`)
	}
}

func (s *Session) titleEvent(title string, msgSeq int64, source string) {
	s.begin("session/title", 5)
	s.raw(`{"title":`)
	s.str(title)
	s.raw(`,"messageSeqs":[`)
	s.num(msgSeq)
	s.raw(`],"source":`)
	s.raw(source)
	s.raw("}")
	s.end()
	s.title, s.hasTitle = title, true
}

// answer streams a final text answer and writes its assistant/message.
func (s *Session) answer(step int, reasoningText, text string) {
	chunkSeqs, _ := s.stream(step, reasoningText, text, "", "", "stop")
	seq := s.beginAssistant(step, reasoningText, reasoningText != "")
	s.str(text)
	s.endAssistant(seq, `{"inputTokens":2400,"outputTokens":300}`, chunkSeqs)
}

// beginAssistant starts the assistant/message of a model step: its
// envelope, a reasoning block when withReasoning, and a text block up to
// its text (the caller writes the text and any further blocks). It
// returns the event's seq.
func (s *Session) beginAssistant(step int, reasoningText string, withReasoning bool) int64 {
	seq := s.begin("assistant/message", 1)
	s.turnStep(step)
	s.raw(`,"message":{"role":"assistant","content":[`)
	if withReasoning {
		s.raw(`{"type":"reasoning","text":`)
		s.str(reasoningText)
		s.raw("},")
	}
	s.raw(`{"type":"text","text":`)
	return seq
}

// endAssistant closes the last block of the assistant/message begun as
// seq: the model source, a message id, usage (a JSON object), the chunks
// it was streamed as, and makes it a surface node.
func (s *Session) endAssistant(seq int64, usage string, chunkSeqs []int64) {
	s.raw(`}],"source":{"kind":"model","provider":"deepseek-official","model":"deepseek-v4-flash"},"id":`)
	s.str(uuid(s.rng))
	s.raw(`},"usage":` + usage + `},"sourceEventSeqs":`)
	s.seqs(chunkSeqs)
	s.raw(`,"surfaceOp":"append"`)
	s.end()
	s.nodes = append(s.nodes, seq)
}

// stream writes the assistant/chunk events of one model step: optional
// reasoning block, a text block, an optional tool-call block, usage and
// finish. Runs of >= 3 deltas are packed rows. It returns every chunk seq.
func (s *Session) stream(step int, reasoningText, text, callID, args, finish string) ([]int64, int) {
	var seqs []int64
	index := 0
	blockStart := func(blockType string) {
		seqs = append(seqs, s.begin("assistant/chunk", 40))
		s.turnStep(step)
		s.raw(`,"chunk":{"type":"block-start","index":`)
		s.num(int64(index))
		s.raw(`,"blockType":"` + blockType + `"}}`)
		s.end()
	}
	blockEnd := func(block func()) {
		seqs = append(seqs, s.begin("assistant/chunk", 1))
		s.turnStep(step)
		s.raw(`,"chunk":{"type":"block-end","index":`)
		s.num(int64(index))
		s.raw(`,"block":`)
		block()
		s.raw("}}")
		s.end()
	}
	// A reasoning or text block: start, deltas, end with the whole text.
	textBlock := func(kind, body string) {
		blockStart(kind)
		seqs = s.deltas(step, index, kind, s.text.split(body), "", seqs)
		blockEnd(func() {
			s.raw(`{"type":"` + kind + `","text":`)
			s.str(body)
			s.raw("}")
		})
		index++
	}
	if reasoningText != "" {
		textBlock("reasoning", reasoningText)
	}
	textBlock("text", text)
	if callID != "" {
		blockStart("tool-call")
		parts := s.text.split(args)
		// The first delta carries the tool name, so it is never packed
		// with the rest (packing needs identical name presence).
		seqs = append(seqs, s.begin("assistant/chunk", 1))
		s.turnStep(step)
		s.raw(`,"chunk":{"type":"tool-call-delta","index":`)
		s.num(int64(index))
		s.raw(`,"id":`)
		s.str(callID)
		s.raw(`,"name":"bash","argumentsDelta":`)
		s.str(parts[0])
		s.raw("}}")
		s.end()
		seqs = s.deltas(step, index, "tool-call", parts[1:], callID, seqs)
		blockEnd(func() {
			s.raw(`{"type":"tool-call","id":`)
			s.str(callID)
			s.raw(`,"name":"bash","arguments":`)
			s.str(args)
			s.raw("}")
		})
	}
	seqs = append(seqs, s.begin("assistant/chunk", 1))
	s.turnStep(step)
	s.raw(`,"chunk":{"type":"usage","usage":{"inputTokens":2400,"outputTokens":300}}}`)
	s.end()
	seqs = append(seqs, s.begin("assistant/chunk", 1))
	s.turnStep(step)
	s.raw(`,"chunk":{"type":"finish","reason":{"kind":"` + finish + `"}}}`)
	s.end()
	return seqs, index
}

// maxRow is the most members one packed row holds (the SQLite codec's
// limit; the JSONL writer packs whole runs of a write batch).
const maxRow = 1024

// deltas writes text-delta / reasoning-delta / tool-call-delta chunks,
// packing runs of >= 3 into rows.
func (s *Session) deltas(step, index int, kind string, parts []string, callID string, seqs []int64) []int64 {
	for len(parts) > 0 {
		n := min(len(parts), maxRow)
		if n < 3 {
			for _, p := range parts[:n] {
				seqs = append(seqs, s.begin("assistant/chunk", 3))
				s.turnStep(step)
				switch kind {
				case "text":
					s.raw(`,"chunk":{"type":"text-delta","index":`)
					s.num(int64(index))
					s.raw(`,"text":`)
				case "reasoning":
					s.raw(`,"chunk":{"type":"reasoning-delta","index":`)
					s.num(int64(index))
					s.raw(`,"text":`)
				default:
					s.raw(`,"chunk":{"type":"tool-call-delta","index":`)
					s.num(int64(index))
					s.raw(`,"id":`)
					s.str(callID)
					s.raw(`,"argumentsDelta":`)
				}
				s.str(p)
				s.raw("}}")
				s.end()
			}
			parts = parts[n:]
			continue
		}
		row := parts[:n]
		parts = parts[n:]
		seq0 := s.seq
		s.buf = append(s.buf, `{"type":"`...)
		s.buf = append(s.buf, kind...)
		s.buf = append(s.buf, `-chunks","seq0":`...)
		s.num(seq0)
		s.raw(`,"time0":`)
		s.num(s.tick(3))
		s.raw(`,"data":`)
		s.turnStep(step)
		s.raw(`,"index":`)
		s.num(int64(index))
		if kind == "tool-call" {
			s.raw(`,"id":`)
			s.str(callID)
		}
		s.raw(`,"dt":[`)
		for i := 1; i < n; i++ {
			if i > 1 {
				s.raw(",")
			}
			dt := 1 + s.rng.Intn(5)
			s.num(int64(dt))
			s.time += int64(dt)
		}
		if kind == "tool-call" {
			s.raw(`],"args":[`)
		} else {
			s.raw(`],"texts":[`)
		}
		for i, p := range row {
			if i > 0 {
				s.raw(",")
			}
			s.str(p)
		}
		s.raw("]}}\n")
		for i := 0; i < n; i++ {
			seqs = append(seqs, seq0+int64(i))
		}
		s.seq += int64(n)
	}
	return seqs
}

// compaction writes a manual compaction (between turns, turn:null) whose
// checkpoint replaces all but the last four surface nodes.
func (s *Session) compaction() {
	keep := 4
	shadowed := append([]int64(nil), s.nodes[:len(s.nodes)-keep]...)
	id := uuid(s.rng)
	cmd := "cmd-" + uuid(s.rng)[:8]
	summary := s.text.text(500 + s.rng.Intn(1500))
	// ids opens the data of a compaction event: its compaction and command ids.
	ids := func() {
		s.raw(`{"compactionId":`)
		s.str(id)
		s.raw(`,"sourceCommandId":`)
		s.str(cmd)
	}
	// bracket writes compaction/start or compaction/end.
	bracket := func(typ string, ms int) int64 {
		seq := s.begin(typ, ms)
		ids()
		s.raw(`,"turn":null}`)
		s.end()
		return seq
	}
	startSeq := bracket("compaction/start", 500)
	sumSeq := s.begin("compaction/summary", 1)
	ids()
	s.raw(`,"summary":[{"type":"text","text":`)
	s.str(summary)
	s.raw(`}],"llmStreamCall":true,"shadowedRange":{"start":`)
	s.num(shadowed[0])
	s.raw(`,"end":`)
	s.num(shadowed[len(shadowed)-1])
	s.raw(`},"shadowedSeqs":`)
	s.seqs(shadowed)
	s.raw(`,"shadowedTokenCount":4200,"provider":"deepseek-official","model":"deepseek-v4-flash","usage":{"inputTokens":9000,"outputTokens":300}}`)
	s.end()
	cpSeq := s.begin("user/message", 0)
	s.raw(`{"content":[{"type":"text","text":"This is an automatically generated checkpoint condensing an earlier span of the conversation to free up context. Treat the captured context as established background and build on it without restating it. Continue the task directly from the messages that follow, without acknowledging this checkpoint.\n\n<compacted-summary>"},{"type":"text","text":`)
	s.str(summary)
	s.raw(`},{"type":"text","text":"</compacted-summary>"}],"source":{"kind":"plugin","plugin":"compact","compactionId":`)
	s.str(id)
	s.raw(`,"sourceCommandId":`)
	s.str(cmd)
	s.raw(`},"role":"user","id":`)
	s.str(uuid(s.rng))
	s.raw(`},"sourceEventSeqs":`)
	s.seqs(append([]int64{startSeq, sumSeq}, shadowed...))
	s.raw(`,"surfaceOp":{"op":"replace","start":`)
	s.num(shadowed[0])
	s.raw(`,"end":`)
	s.num(shadowed[len(shadowed)-1])
	s.raw("}")
	s.end()
	s.nodes = append([]int64{cpSeq}, s.nodes[len(s.nodes)-keep:]...)
	bracket("compaction/end", 0)
}
