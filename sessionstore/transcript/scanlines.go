package transcript

import (
	"errors"
	"fmt"
)

// lineScanner applies the log rules of spec §3.1 to complete logical lines
// fed one at a time: packed-row expansion, seq contiguity, and the
// committed-region rule (a bad line followed, later, by a turn/end is
// corruption; otherwise the bad line and everything after it are a torn
// tail). It lets an incremental reader continue a scan from a saved
// position.
type lineScanner struct {
	// NextSeq is the seq the next event must carry.
	NextSeq int64
	// Strict makes every bad line corruption (complete zstd frames).
	Strict bool

	// SkipRows makes well-formed packed rows count instead of expanding
	// into events (their members are log-only chunks no check looks
	// into): Skipped reports the rows accepted since the last TakeSkipped.
	SkipRows bool
	skipped  RowSummary

	Events  []Event
	bad     bool
	badLine int
	badErr  error
	Lines   int
	// GoodEnd is the logical offset after the last good line.
	GoodEnd int64
}

// Feed processes one complete line (without "\n") that ends at logical
// offset end. It returns an error only for corruption.
func (s *lineScanner) Feed(line []byte, end int64) error {
	evs, row, err := decodeRecord(line, !s.SkipRows)
	return s.feedDecoded(evs, row, err, end)
}

// feedDecoded is Feed given decodeRecord(line, !s.SkipRows)'s answer for
// the line (the streamed read decodes lines ahead on another goroutine:
// stream_ahead.go).
func (s *lineScanner) feedDecoded(evs []Event, row RowSummary, err error, end int64) error {
	s.Lines++
	if s.bad {
		if err == nil && hasTurnEnd(evs) {
			return s.committedErr()
		}
		return nil
	}
	if err == nil && row.N > 0 {
		if row.Seq0 != s.NextSeq {
			err = Corruptf("event seq %d where %d was expected", row.Seq0, s.NextSeq)
		} else {
			if s.skipped.N == 0 {
				s.skipped.Seq0 = row.Seq0
			}
			s.skipped.N += row.N
			s.skipped.Last = row.Last
			s.NextSeq += row.N
			s.GoodEnd = end
			return nil
		}
	}
	if err == nil {
		for i := range evs {
			if evs[i].Seq != s.NextSeq+int64(i) {
				err = Corruptf("event seq %d where %d was expected", evs[i].Seq, s.NextSeq+int64(i))
				if hasTurnEnd(evs) {
					s.bad, s.badLine, s.badErr = true, s.Lines, err
					return s.committedErr()
				}
				break
			}
		}
	}
	if err != nil {
		s.bad, s.badLine, s.badErr = true, s.Lines, err
		if s.Strict {
			return &Error{Kind: KindCorrupt, Msg: fmt.Sprintf("complete frame contains a torn JSONL record (line %d)", s.Lines), Err: err}
		}
		return nil
	}
	s.Events = append(s.Events, evs...)
	s.NextSeq += int64(len(evs))
	s.GoodEnd = end
	return nil
}

func (s *lineScanner) committedErr() error {
	return &Error{Kind: KindCorrupt, Msg: fmt.Sprintf("bad record at event line %d before a later turn/end", s.badLine), Err: s.badErr}
}

// takeSkipped returns the packed-row members counted (SkipRows) since the
// last call, and forgets them.
func (s *lineScanner) TakeSkipped() RowSummary {
	r := s.skipped
	s.skipped = RowSummary{}
	return r
}

// Bad reports whether a bad line was seen (the rest is a torn tail).
func (s *lineScanner) Bad() bool { return s.bad }

func hasTurnEnd(evs []Event) bool {
	for _, e := range evs {
		if e.Type == "turn/end" {
			return true
		}
	}
	return false
}

// parseHeaderLine parses and version-checks the header (spec §4 step 1: a
// foreign version is refused before any event is decoded).
func ParseHeaderLine(line []byte) (*Header, error) {
	h, err := ParseHeader(line)
	if err != nil {
		return nil, err
	}
	if v, ok := safeInt(h.fields["version"]); !ok || v != 0 {
		return nil, unsupportedf("session format version %s is not supported (want 0)", string(Compact(h.fields["version"])))
	}
	return h, nil
}

// backendf is a corruption detected by the backend read (dsh maps these to
// SESSION_QUERY_PERSISTENCE_FAILED, not CORRUPT_SESSION).
func backendf(format string, args ...any) *Error {
	return &Error{Kind: KindCorrupt, Msg: fmt.Sprintf(format, args...), Backend: true}
}

func markBackend(err error) error {
	var le *Error
	if errors.As(err, &le) {
		c := *le
		c.Backend = true
		return &c
	}
	return err
}
