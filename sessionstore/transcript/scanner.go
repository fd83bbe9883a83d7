package transcript

import "fmt"

// lineScanner applies the log rules of spec §3.1 to lines fed one at a
// time: seq contiguity and the committed region (a bad line followed by a
// turn/end is corruption, else it starts the torn tail).
type lineScanner struct {
	// nextSeq is the seq the next event must carry.
	nextSeq int64
	// strict makes every bad line corruption (complete zstd frames).
	strict bool
	// skipRows counts well-formed packed rows instead of expanding them.
	skipRows bool
	skipped  RowSummary
	// events are the events of the lines fed since the caller reset it.
	events []Event
	// env is the envelope of the last line fed, which its events point
	// to; with keep, every line gets an envelope of its own, so that its
	// events stay valid past the next line (they alias bytes in memory).
	env  envelope
	keep bool
	// lines counts the lines fed; bad is set from the first bad line on.
	lines   int
	bad     bool
	badLine int
	badErr  error
}

// feed processes one complete line (without "\n"). It returns an error
// only for corruption.
func (s *lineScanner) feed(line []byte) error {
	env := &s.env
	if s.keep {
		env = &envelope{}
	}
	n := len(s.events)
	all, row, err := decodeRecord(s.events, line, !s.skipRows, env)
	evs := all[n:]
	s.lines++
	if s.bad {
		if err == nil && hasTurnEnd(evs) {
			return s.committedErr()
		}
		return nil
	}
	switch {
	case err == nil && row.N > 0:
		if row.Seq0 == s.nextSeq {
			s.count(row)
			return nil
		}
		err = Corruptf("event seq %d where %d was expected", row.Seq0, s.nextSeq)
	case err == nil:
		err = s.contiguous(evs)
	}
	if err != nil {
		s.bad, s.badLine, s.badErr = true, s.lines, err
		switch {
		case hasTurnEnd(evs): // out of sequence (a bad record has no events)
			return s.committedErr()
		case s.strict:
			return &Error{Kind: KindCorrupt, Msg: fmt.Sprintf("complete frame contains a torn JSONL record (line %d)", s.lines), Err: err}
		}
		return nil
	}
	s.events = all
	s.nextSeq += int64(len(evs))
	return nil
}

// contiguous checks that evs carry the next seqs.
func (s *lineScanner) contiguous(evs []Event) error {
	for i := range evs {
		if evs[i].Seq != s.nextSeq+int64(i) {
			return Corruptf("event seq %d where %d was expected", evs[i].Seq, s.nextSeq+int64(i))
		}
	}
	return nil
}

// count counts the members of a well-formed packed row in sequence.
func (s *lineScanner) count(row RowSummary) {
	if s.skipped.N == 0 {
		s.skipped.Seq0 = row.Seq0
	}
	s.skipped.N += row.N
	s.skipped.Last = row.Last
	s.nextSeq += row.N
}

func (s *lineScanner) committedErr() error {
	return &Error{Kind: KindCorrupt, Msg: fmt.Sprintf("bad record at event line %d before a later turn/end", s.badLine), Err: s.badErr}
}

// takeSkipped returns and forgets the packed-row members counted.
func (s *lineScanner) takeSkipped() RowSummary {
	r := s.skipped
	s.skipped = RowSummary{}
	return r
}

func hasTurnEnd(evs []Event) bool {
	for _, e := range evs {
		if e.Type == "turn/end" {
			return true
		}
	}
	return false
}
