package transcript

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"sync"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// The fold is dsh's read pipeline after the scan (spec §4 steps 2–6, §5.1,
// §8), one event at a time (Fold.Stored, closed by Fold.Finish). dsh runs
// its checks in passes over the whole log and reports the first error of
// the earliest failing pass, so the fold keeps the first error of each
// pass and stops running a pass once an earlier one has failed.

// Passes of the load: a higher value wins; passNone (no failure) makes a
// zero FoldState a fresh fold.
const (
	passNone = iota
	passFold
	passEnvelope
	passUnknown
	passMessage
	passUpgrade
)

// FoldState is what the fold carries from one event to the next, plain
// (gob-encodable) data that the index persists and resumes.
type FoldState struct {
	// Count is the number of events folded; LastSeq and LastTime are the
	// last event's.
	Count             int64
	LastSeq, LastTime int64
	// FailPass is the earliest failing pass and Fail its error.
	FailPass int
	Fail     SavedError
	// NeedIDs: a legacy replacing tool/result asked for an earlier
	// message id not kept, so the log must be folded again with KeepIDs,
	// which keeps every message id in IDs.
	NeedIDs bool
	KeepIDs bool
	IDs     map[int64]string
	Closer  closerState
	// Nodes is the folded surface (seqs in surface order); Results holds
	// each tool/result node's digest for the replace rule.
	Nodes   []int64
	Results map[int64]resultKey
	// Title is the latest session/title event; when its data is over
	// maxTitleEventBytes, it keeps none and TitleOversize is its size.
	Title         *Event
	TitleOversize int
}

// Clone returns a copy of s that shares nothing mutable with it.
func (s *FoldState) Clone() FoldState {
	c := *s
	c.Nodes = slices.Clone(s.Nodes)
	c.Results = maps.Clone(s.Results)
	c.IDs = maps.Clone(s.IDs)
	c.Closer = s.Closer.clone()
	if s.Title != nil {
		t := *s.Title
		c.Title = &t
	}
	return c
}

// Fold runs the pipeline over one session's events.
type Fold struct {
	FoldState
	id string
	// OnNode is called when e becomes the surface node at index si,
	// replacing shadowed (nil for an append); e may alias a read buffer.
	OnNode func(e *Event, si int, shadowed []int64)
}

// foldScratch holds a buffer a surface step reuses: the event's
// sourceEventSeqs or a tool result's canonical JSON. They are pooled
// across folds, not kept per fold: a first pass folds each of 100,000
// sessions once, and regrowing them in every fold was an eighth of what
// it allocated (bench/README.md).
type foldScratch struct {
	seqs  []int64
	canon []byte
}

var scratchPool = sync.Pool{New: func() any { return new(foldScratch) }}

// FirstSurfaceCap is the room a fold (and an index, for the surface's
// locations) gives a surface it starts: a small
// session's (a few turns) fits, where growing from one element
// reallocated it four times.
const FirstSurfaceCap = 16

// maxScratch is the largest buffer returned to the pool: a huge event's
// would otherwise stay held.
const maxScratch = 64 << 10

// ResumeFold continues a fold from a saved state (zero: a new fold).
func ResumeFold(id string, st FoldState) *Fold {
	return &Fold{id: id, FoldState: st}
}

// fail keeps err as the load's error unless a pass that wins over pass
// failed already. The fold's errors are plain *Error values (no cause),
// which Fail keeps whole.
func (f *Fold) fail(pass int, err error) {
	if pass > f.FailPass {
		f.FailPass, f.Fail = pass, SaveError(err)
	}
}

// Stored folds one stored event, upgrading it in place.
func (f *Fold) Stored(e *Event) {
	f.Count++
	f.LastSeq, f.LastTime = e.Seq, e.Time
	if f.FailPass >= passUpgrade || f.NeedIDs {
		return
	}
	if err := UpgradeEvent(f.id, e, f.earlierID(e.Seq)); err != nil {
		f.fail(passUpgrade, err)
		return
	}
	if f.NeedIDs {
		return
	}
	if f.KeepIDs {
		f.keepID(e)
	}
	f.check(e)
	f.Closer.feed(e)
	f.surfaceAndTitle(e)
}

// earlierID answers the legacy upgrade's question for the event at seq
// at (the message id of an earlier event) from the kept ids, or marks the
// fold as needing them.
func (f *Fold) earlierID(at int64) func(seq int64) string {
	return func(seq int64) string {
		switch {
		case seq >= at:
			return ""
		case f.KeepIDs:
			return f.IDs[seq]
		}
		f.NeedIDs = true
		return ""
	}
}

// keepID keeps the message id of e.
func (f *Fold) keepID(e *Event) {
	if id := messageID(e); id != "" {
		if f.IDs == nil {
			f.IDs = map[int64]string{}
		}
		f.IDs[e.Seq] = id
	}
}

// check runs the per-event checks of the passes that have not failed.
func (f *Fold) check(e *Event) {
	if f.FailPass < passMessage {
		if err := checkMessage(e); err != nil {
			f.fail(passMessage, err)
		}
	}
	if f.FailPass < passUnknown && !knownType(e.Type) && !e.Ignorable {
		f.fail(passUnknown, unsupportedf("event %d has unknown type %s (written by a newer harness?)", e.Seq, jsjson.Quote(e.Type)))
	}
	if f.FailPass < passEnvelope {
		err := checkEnvelope(e)
		if err == nil && e.Type == "request/header" {
			err = checkRequestHeader(e)
		}
		if err != nil {
			f.fail(passEnvelope, err)
		}
	}
}

// Skip folds the n members of a well-formed packed row (log-only events
// no check looks into) ending at lastSeq, lastTime.
func (f *Fold) Skip(n, lastSeq, lastTime int64) {
	f.Count += n
	f.LastSeq, f.LastTime = lastSeq, lastTime
}

// surfaceAndTitle runs the surface fold for e and keeps the latest title.
func (f *Fold) surfaceAndTitle(e *Event) {
	if f.FailPass < passFold {
		if err := f.surface(e); err != nil {
			f.fail(passFold, err)
		}
	}
	if e.Type == "session/title" {
		// The state is persisted: an oversize title keeps only its size.
		f.Title, f.TitleOversize = &Event{Type: e.Type, Seq: e.Seq, Time: e.Time}, 0
		if len(e.Data) > maxTitleEventBytes {
			f.TitleOversize = len(e.Data)
		} else {
			f.Title.Data = append(json.RawMessage(nil), e.Data...)
		}
	}
}

// Finish folds the crash closers and returns them with the load's error.
// A resumable caller finishes a clone.
func (f *Fold) Finish() ([]Event, error) {
	if f.FailPass >= passUpgrade || f.Count == 0 {
		return nil, f.Fail.Err()
	}
	closers := f.Closer.closers(f.LastSeq, f.LastTime)
	for i := range closers {
		c := &closers[i]
		if f.FailPass < passEnvelope {
			if err := checkMessage(c); err != nil {
				f.fail(passEnvelope, err)
			}
		}
		f.surfaceAndTitle(c)
		f.LastSeq = c.Seq // capturedThroughSeq counts the closers
	}
	return closers, f.Fail.Err()
}

// FinishErr returns the error Finish would return after s, without
// changing s: a copy is folded only when there are crash closers to fold
// (an open turn). A finished session has none, and copying every state
// to learn that was a tenth of a first pass's map allocations.
func (s *FoldState) FinishErr(id string) error {
	if s.Closer.OpenTurn == nil {
		return s.Fail.Err()
	}
	_, err := ResumeFold(id, s.Clone()).Finish()
	return err
}

// LatestTitle is TitleOf the latest title event (a copy: the state may be
// shared by concurrent readers).
func (s *FoldState) LatestTitle() (*Title, error) {
	if s.Title == nil {
		return nil, nil
	}
	if s.TitleOversize > 0 {
		return nil, titleTooLarge(s.Title.Seq, "data", s.TitleOversize, maxTitleEventBytes)
	}
	e := *s.Title
	return TitleOf(&e)
}

// surface is one step of dsh's foldSurface (spec §5.1).
func (f *Fold) surface(e *Event) error {
	if !IsSurfaceType(e.Type) {
		if e.SurfaceOp != nil || e.SourceEventSeqs != nil {
			return Corruptf("event %d: log-only %s carries a surface marker", e.Seq, e.Type)
		}
		return nil
	}
	sc := scratchPool.Get().(*foldScratch)
	defer scratchPool.Put(sc)
	seqs, err := citedSeqs(e, sc.seqs[:0])
	if cap(seqs) > cap(sc.seqs) && cap(seqs) <= maxScratch/8 { // nil when e cites none
		sc.seqs = seqs[:0]
	}
	if err != nil {
		return err
	}
	if e.SurfaceOp == nil {
		return Corruptf("event %d: %s has no surfaceOp", e.Seq, e.Type)
	}
	if string(Compact(e.SurfaceOp)) == `"append"` {
		if f.Nodes == nil {
			f.Nodes = make([]int64, 0, FirstSurfaceCap)
		}
		f.Nodes = append(f.Nodes, e.Seq)
		f.node(e, len(f.Nodes)-1, nil)
		return nil
	}
	return f.replace(e, seqs)
}

// citedSeqs parses and checks the sourceEventSeqs of surface event e,
// appending them to buf; from the record's tape while they are the stored
// record's.
func citedSeqs(e *Event, buf []int64) ([]int64, error) {
	if e.SourceEventSeqs == nil {
		return nil, nil
	}
	seqs, ok := buf, true
	add := func(x []byte, _ obj) {
		n, good := nonNegSafeInt(x)
		ok = ok && good
		seqs = append(seqs, n)
	}
	var list bool
	if env := e.env; env != nil && env.seqsAt >= 0 && sameBytes(e.SourceEventSeqs, env.sourceEventSeqs) {
		list = env.tape.elems(env.seqsAt, add)
	} else {
		list = elements(bytes.TrimSpace(e.SourceEventSeqs), func(x []byte) { add(x, obj{}) })
	}
	if !list || !ok {
		return nil, Corruptf("event %d: sourceEventSeqs is not an array of non-negative safe integers", e.Seq)
	}
	if len(seqs) == 0 && e.Type != "assistant/message" {
		return nil, Corruptf("event %d: empty sourceEventSeqs", e.Seq)
	}
	return seqs, checkCited(e.Seq, seqs)
}

// replace folds a replacing surface event citing seqs: it must name a
// span of the surface and cite every node it shadows.
func (f *Fold) replace(e *Event, seqs []int64) error {
	start, end, ok := parseReplaceOp(e.SurfaceOp)
	if !ok {
		return Corruptf("event %d: invalid surfaceOp %s", e.Seq, string(Compact(e.SurfaceOp)))
	}
	si, ei := slices.Index(f.Nodes, start), slices.Index(f.Nodes, end)
	if si < 0 || ei < 0 || si > ei {
		return Corruptf("event %d: replace {start:%d,end:%d} does not name a surface span", e.Seq, start, end)
	}
	shadowed := slices.Clone(f.Nodes[si : ei+1])
	sorted := slices.Sorted(slices.Values(seqs))
	for _, s := range shadowed {
		if _, found := slices.BinarySearch(sorted, s); !found {
			return Corruptf("event %d: replace shadows seq %d without citing it in sourceEventSeqs", e.Seq, s)
		}
	}
	if e.Type == "tool/result" {
		if err := f.checkResultReplace(e, shadowed); err != nil {
			return err
		}
	}
	for _, s := range shadowed {
		delete(f.Results, s)
	}
	f.Nodes = slices.Replace(f.Nodes, si, ei+1, e.Seq)
	f.node(e, si, shadowed)
	return nil
}

// checkResultReplace: a replacing tool/result shadows exactly one
// tool/result and differs from it only in the result content.
func (f *Fold) checkResultReplace(e *Event, shadowed []int64) error {
	old, isResult := f.Results[shadowed[0]]
	if len(shadowed) != 1 || !isResult {
		return Corruptf("event %d: a replacing tool/result must shadow exactly one tool/result", e.Seq)
	}
	if k := f.digestResult(e.data()); !old.OK || !k.OK || old.Sum != k.Sum {
		return Corruptf("event %d: a replacing tool/result may only change the result content", e.Seq)
	}
	return nil
}

// checkCited applies the sourceEventSeqs rules of §5.1, reporting the
// first offending entry.
func checkCited(seq int64, seqs []int64) error {
	var seen map[int64]bool // built at the first entry out of order: until then no repeat is possible
	for i, s := range seqs {
		if s >= seq {
			return Corruptf("event %d: sourceEventSeqs cites seq %d, not earlier", seq, s)
		}
		if seen == nil && i > 0 && s <= seqs[i-1] {
			seen = make(map[int64]bool, len(seqs))
			for _, p := range seqs[:i] {
				seen[p] = true
			}
		}
		if seen != nil {
			if seen[s] {
				return Corruptf("event %d: sourceEventSeqs repeats seq %d", seq, s)
			}
			seen[s] = true
		}
	}
	return nil
}

// node records a new surface node.
func (f *Fold) node(e *Event, si int, shadowed []int64) {
	if e.Type == "tool/result" {
		if f.Results == nil {
			f.Results = map[int64]resultKey{}
		}
		f.Results[e.Seq] = f.digestResult(e.data())
	}
	if f.OnNode != nil {
		f.OnNode(e, si, shadowed)
	}
}

// resultKey is a tool/result's digest; OK is false when it does not parse.
type resultKey struct {
	Sum [sha256.Size]byte
	OK  bool
}

// digestResult digests a tool/result's data with message.content[0].content
// blanked: digests are equal exactly when the data are equal as parsed JSON
// (canonJSON).
func (f *Fold) digestResult(data obj) resultKey {
	sc := scratchPool.Get().(*foldScratch)
	defer scratchPool.Put(sc)
	b, ok := []byte(nil), false
	if data.onTape {
		b, ok = canonObject(sc.canon[:0], data, blankResultContent)
	} else {
		b, ok = canonJSON(sc.canon[:0], data.raw, blankResultContent)
	}
	if cap(b) <= maxScratch {
		sc.canon = b[:0]
	}
	if !ok {
		return resultKey{}
	}
	return resultKey{Sum: sha256.Sum256(b), OK: true}
}

const (
	noticeOutcomeUnknown = "The tool call was interrupted after it was recorded, but no result was durably recorded. Its outcome is unknown. Decide whether to retry from the tool semantics: retry only if the operation is read-only or idempotent; if it may have side effects, first verify external state or ask the user. Do not retry blindly."
	noticeNotStarted     = "The tool call was interrupted before the Harness recorded it as started. Retry it if it is still needed."
)

// pendingCall is a tool call of the open step without a result yet.
type pendingCall struct {
	ID      string
	Step    json.RawMessage
	CallSeq int64
	Logged  bool
}

// closerState is dsh's interruptedTurnClosers fold (spec §4 step 5): the
// open turn and step and their pending tool calls, copied from the events.
type closerState struct {
	OpenTurn json.RawMessage
	OpenStep json.RawMessage
	Calls    []pendingCall
}

func (c closerState) clone() closerState {
	c.Calls = slices.Clone(c.Calls)
	return c
}

func (c *closerState) byID(id string) int {
	for i := range c.Calls {
		if c.Calls[i].ID == id {
			return i
		}
	}
	return -1
}

// feed folds one (upgraded) event.
func (c *closerState) feed(e *Event) {
	switch e.Type {
	case "turn/start":
		c.OpenTurn, c.OpenStep, c.Calls = bytes.Clone(Compact(e.data().get("turn"))), nil, nil
	case "turn/end":
		c.OpenTurn, c.OpenStep, c.Calls = nil, nil, nil
	case "step/start":
		c.OpenStep = bytes.Clone(Compact(e.data().get("step")))
	case "step/end":
		c.OpenStep, c.Calls = nil, nil
	case "assistant/message":
		c.feedAssistant(e)
	case "tool/call":
		id, _ := strView(e.data().get("callId"))
		if i := c.byID(id); i >= 0 {
			c.Calls[i].CallSeq, c.Calls[i].Logged = e.Seq, true
		}
	case "tool/result":
		id, _ := strView(e.data().sub("message").sub("source").get("callId"))
		if i := c.byID(id); i >= 0 {
			c.Calls = slices.Delete(c.Calls, i, i+1)
		}
	}
}

// feedAssistant records an assistant message's tool calls as pending; as
// with a JS Map.set, a repeated id keeps its place.
func (c *closerState) feedAssistant(e *Event) {
	d := e.data()
	step := d.get("step")
	d.sub("message").elems("content", func(_ []byte, block obj) {
		v, _, _ := block.pick("type", "id")
		if t, _ := strView(v[0]); t != "tool-call" {
			return
		}
		id, _ := str(v[1])
		p := pendingCall{ID: id, Step: bytes.Clone(Compact(step))}
		if i := c.byID(id); i >= 0 {
			c.Calls[i] = p
		} else {
			c.Calls = append(c.Calls, p)
		}
	})
}

// closers returns the closing events after the last event (lastSeq, t).
func (c *closerState) closers(lastSeq, t int64) []Event {
	if c.OpenTurn == nil {
		return nil
	}
	openTurn := c.OpenTurn
	seq := lastSeq + 1
	var out []Event
	for _, p := range c.Calls {
		code, name, text := "TOOL_NOT_STARTED", "ToolNotStartedError", noticeNotStarted
		if p.Logged {
			code, name, text = "TOOL_OUTCOME_UNKNOWN", "ToolOutcomeUnknownError", noticeOutcomeUnknown
		}
		idStr := "interrupted-tool-result-" + p.ID + "-" + strconv.FormatInt(seq, 10)
		textBlock := jsjson.NewObject(nil).String("type", "text").String("text", text).Bytes()
		block := jsjson.NewObject(nil).String("type", "tool-result").String("toolCallId", p.ID).Raw("isError", []byte("true")).
			Raw("content", wrapArray(textBlock)).Bytes()
		msg := jsjson.NewObject(nil).String("id", idStr).String("role", "user").
			Raw("source", jsjson.NewObject(nil).String("kind", "tool").String("callId", p.ID).Bytes()).
			Raw("content", wrapArray(block)).Bytes()
		step := p.Step
		if step == nil {
			step = []byte("null")
		}
		data := jsjson.NewObject(nil).Raw("turn", openTurn).Raw("step", step).Raw("message", msg).
			Raw("error", jsjson.NewObject(nil).String("name", name).String("code", code).Bytes()).Bytes()
		ev := Event{Type: "tool/result", Seq: seq, Time: t, Data: data, SurfaceOp: json.RawMessage(`"append"`), opFirst: true}
		if p.Logged {
			ev.SourceEventSeqs = wrapArray([]byte(strconv.FormatInt(p.CallSeq, 10)))
		}
		out = append(out, ev)
		seq++
	}
	if c.OpenStep != nil {
		out = append(out, Event{Type: "step/end", Seq: seq, Time: t, Data: jsjson.NewObject(nil).Raw("turn", openTurn).Raw("step", c.OpenStep).Bytes()})
		seq++
	}
	out = append(out, Event{Type: "turn/end", Seq: seq, Time: t,
		Data: jsjson.NewObject(nil).Raw("turn", openTurn).Raw("reason", json.RawMessage(`{"kind":"interrupted"}`)).Bytes()})
	return out
}

func wrapArray(v []byte) json.RawMessage {
	return append(append([]byte{'['}, v...), ']')
}
