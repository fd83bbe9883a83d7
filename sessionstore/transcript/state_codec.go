package transcript

import (
	"bytes"
	"crypto/sha256"
	"maps"
	"slices"

	"github.com/dsh-lsp/dsh-lsp/internal/binenc"
)

// AppendBinary appends s's encoding, which ReadFoldState reads back equal
// (nil and empty values kept apart), to b. The index keeps every
// session's state encoded: a few hundred bytes instead of a few
// kilobytes of maps and slices, and persisted as it is.
func (s *FoldState) AppendBinary(b []byte) []byte {
	b = binenc.AppendInt(b, s.Count)
	b = binenc.AppendInt(b, s.LastSeq)
	b = binenc.AppendInt(b, s.LastTime)
	b = binenc.AppendInt(b, int64(s.FailPass))
	b = AppendSavedError(b, s.Fail)
	b = binenc.AppendBool(b, s.NeedIDs)
	b = binenc.AppendBool(b, s.KeepIDs)
	b = binenc.AppendBool(b, s.IDs != nil)
	b = binenc.AppendUint(b, uint64(len(s.IDs)))
	for _, seq := range slices.Sorted(maps.Keys(s.IDs)) {
		b = binenc.AppendString(binenc.AppendInt(b, seq), s.IDs[seq])
	}
	b = binenc.AppendOptBytes(b, s.Closer.OpenTurn)
	b = binenc.AppendOptBytes(b, s.Closer.OpenStep)
	b = binenc.AppendBool(b, s.Closer.Calls != nil)
	b = binenc.AppendUint(b, uint64(len(s.Closer.Calls)))
	for _, c := range s.Closer.Calls {
		b = binenc.AppendString(b, c.ID)
		b = binenc.AppendOptBytes(b, c.Step)
		b = binenc.AppendInt(b, c.CallSeq)
		b = binenc.AppendBool(b, c.Logged)
	}
	b = binenc.AppendBool(b, s.Nodes != nil)
	b = binenc.AppendUint(b, uint64(len(s.Nodes)))
	prev := int64(0)
	for _, seq := range s.Nodes {
		b = binenc.AppendInt(b, seq-prev) // surface order is mostly ascending
		prev = seq
	}
	b = binenc.AppendBool(b, s.Results != nil)
	b = binenc.AppendUint(b, uint64(len(s.Results)))
	for _, seq := range slices.Sorted(maps.Keys(s.Results)) {
		k := s.Results[seq]
		b = binenc.AppendBool(append(binenc.AppendInt(b, seq), k.Sum[:]...), k.OK)
	}
	b = binenc.AppendBool(b, s.Title != nil)
	if s.Title != nil {
		b = appendEvent(b, s.Title)
	}
	return binenc.AppendInt(b, int64(s.TitleOversize))
}

// ReadFoldState reads what AppendBinary wrote, copying what it keeps (the
// state outlives r's buffer); r's error says when the bytes are not such
// an encoding.
func ReadFoldState(r *binenc.Reader) FoldState {
	var s FoldState
	s.Count, s.LastSeq, s.LastTime = r.Int(), r.Int(), r.Int()
	s.FailPass = int(r.Int())
	s.Fail = ReadSavedError(r)
	s.NeedIDs, s.KeepIDs = r.Bool(), r.Bool()
	if hasIDs, n := r.Bool(), r.Count(2); hasIDs {
		s.IDs = make(map[int64]string, n)
		for range n {
			seq := r.Int()
			s.IDs[seq] = r.String()
		}
	}
	s.Closer.OpenTurn = bytes.Clone(r.OptBytes())
	s.Closer.OpenStep = bytes.Clone(r.OptBytes())
	if hasCalls, n := r.Bool(), r.Count(4); hasCalls {
		s.Closer.Calls = make([]pendingCall, n)
		for i := range s.Closer.Calls {
			c := &s.Closer.Calls[i]
			c.ID = r.String()
			c.Step = bytes.Clone(r.OptBytes())
			c.CallSeq, c.Logged = r.Int(), r.Bool()
		}
	}
	if hasNodes, n := r.Bool(), r.Count(1); hasNodes {
		s.Nodes = make([]int64, n)
		prev := int64(0)
		for i := range s.Nodes {
			prev += r.Int()
			s.Nodes[i] = prev
		}
	}
	if hasResults, n := r.Bool(), r.Count(2+sha256.Size); hasResults {
		s.Results = make(map[int64]resultKey, n)
		for range n {
			seq := r.Int()
			var k resultKey
			copy(k.Sum[:], r.Fixed(sha256.Size))
			k.OK = r.Bool()
			s.Results[seq] = k
		}
	}
	if r.Bool() {
		s.Title = readEvent(r)
	}
	s.TitleOversize = int(r.Int())
	return s
}

func appendEvent(b []byte, e *Event) []byte {
	b = binenc.AppendString(b, e.Type)
	b = binenc.AppendInt(b, e.Seq)
	b = binenc.AppendInt(b, e.Time)
	b = binenc.AppendOptBytes(b, e.Data)
	b = binenc.AppendOptBytes(b, e.SourceEventSeqs)
	b = binenc.AppendOptBytes(b, e.SurfaceOp)
	return binenc.AppendBool(b, e.Ignorable)
}

func readEvent(r *binenc.Reader) *Event {
	e := &Event{Type: r.String(), Seq: r.Int(), Time: r.Int()}
	e.Data = bytes.Clone(r.OptBytes())
	e.SourceEventSeqs = bytes.Clone(r.OptBytes())
	e.SurfaceOp = bytes.Clone(r.OptBytes())
	e.Ignorable = r.Bool()
	return e
}

// AppendSavedError appends s's encoding to b.
func AppendSavedError(b []byte, s SavedError) []byte {
	b = binenc.AppendString(binenc.AppendInt(b, int64(s.Kind)), s.Msg)
	return binenc.AppendBool(binenc.AppendBool(b, s.Backend), s.Limit)
}

// ReadSavedError reads what AppendSavedError wrote.
func ReadSavedError(r *binenc.Reader) SavedError {
	s := SavedError{Kind: Kind(r.Int()), Msg: r.String()}
	s.Backend, s.Limit = r.Bool(), r.Bool()
	return s
}
