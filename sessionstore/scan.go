package sessionstore

import (
	"errors"
	"fmt"
)

// Encoding is a store's physical encoding (one per root).
type Encoding int

// Encodings and their transcript file names.
const (
	// Raw is compression "none": session.jsonl.
	Raw Encoding = iota + 1
	// Zstd is compression "zstd" (dsh's default): session.jsonl.zstd.
	Zstd
)

// FileName returns the transcript file name for e.
func (e Encoding) FileName() string {
	if e == Zstd {
		return "session.jsonl.zstd"
	}
	return "session.jsonl"
}

// transcriptFor decides which transcript of one session directory is read
// and which is skipped; it is the store's only encoding rule, used by
// listing, lookup by id and the index alike. With a pinned encoding (dsh's
// compression setting) only that suffix is read. Unpinned, each directory
// is read by its own suffix, so a store holding both encodings (a user who
// switched compression) lists every session; a directory holding both
// transcripts reads session.jsonl.zstd, the file dsh writes by default.
// The choice depends on that directory alone, so no other session can
// change which file is read. skipped is the encoding of a transcript that
// is present but not read (reported), else 0; read is 0 when none is.
func transcriptFor(pinned Encoding, hasRaw, hasZstd bool) (read, skipped Encoding) {
	switch {
	case pinned == Zstd || (pinned == 0 && hasZstd):
		if hasRaw {
			skipped = Raw
		}
		if hasZstd {
			read = Zstd
		}
	default:
		if hasZstd {
			skipped = Zstd
		}
		if hasRaw {
			read = Raw
		}
	}
	return read, skipped
}

// other is the other encoding.
func (e Encoding) other() Encoding {
	if e == Zstd {
		return Raw
	}
	return Zstd
}

// String returns the encoding name used in messages ("none" or "zstd").
func (e Encoding) String() string {
	if e == Zstd {
		return "zstd"
	}
	return "raw"
}

// LineScanner applies the log rules of spec §3.1 to complete logical lines
// fed one at a time: packed-row expansion, seq contiguity, and the
// committed-region rule (a bad line followed, later, by a turn/end is
// corruption; otherwise the bad line and everything after it are a torn
// tail). It lets an incremental reader continue a scan from a saved
// position.
type LineScanner struct {
	// NextSeq is the seq the next event must carry.
	NextSeq int64
	// Strict makes every bad line corruption (complete zstd frames).
	Strict bool

	// SkipRows makes well-formed packed rows count instead of expanding
	// into events (their members are log-only chunks no check looks
	// into): Skipped reports the rows accepted since the last TakeSkipped.
	SkipRows bool
	skipped  rowSummary

	events  []Event
	bad     bool
	badLine int
	badErr  error
	lines   int
	// GoodEnd is the logical offset after the last good line.
	GoodEnd int64
}

// Feed processes one complete line (without "\n") that ends at logical
// offset end. It returns an error only for corruption.
func (s *LineScanner) Feed(line []byte, end int64) error {
	evs, row, err := decodeRecord(line, !s.SkipRows)
	return s.feedDecoded(evs, row, err, end)
}

// feedDecoded is Feed given decodeRecord(line, !s.SkipRows)'s answer for
// the line (the streamed read decodes lines ahead on another goroutine:
// stream_ahead.go).
func (s *LineScanner) feedDecoded(evs []Event, row rowSummary, err error, end int64) error {
	s.lines++
	if s.bad {
		if err == nil && hasTurnEnd(evs) {
			return s.committedErr()
		}
		return nil
	}
	if err == nil && row.n > 0 {
		if row.seq0 != s.NextSeq {
			err = corruptf("event seq %d where %d was expected", row.seq0, s.NextSeq)
		} else {
			if s.skipped.n == 0 {
				s.skipped.seq0 = row.seq0
			}
			s.skipped.n += row.n
			s.skipped.last = row.last
			s.NextSeq += row.n
			s.GoodEnd = end
			return nil
		}
	}
	if err == nil {
		for i := range evs {
			if evs[i].Seq != s.NextSeq+int64(i) {
				err = corruptf("event seq %d where %d was expected", evs[i].Seq, s.NextSeq+int64(i))
				if hasTurnEnd(evs) {
					s.bad, s.badLine, s.badErr = true, s.lines, err
					return s.committedErr()
				}
				break
			}
		}
	}
	if err != nil {
		s.bad, s.badLine, s.badErr = true, s.lines, err
		if s.Strict {
			return &logError{kind: KindCorrupt, msg: fmt.Sprintf("complete frame contains a torn JSONL record (line %d)", s.lines), err: err}
		}
		return nil
	}
	s.events = append(s.events, evs...)
	s.NextSeq += int64(len(evs))
	s.GoodEnd = end
	return nil
}

func (s *LineScanner) committedErr() error {
	return &logError{kind: KindCorrupt, msg: fmt.Sprintf("bad record at event line %d before a later turn/end", s.badLine), err: s.badErr}
}

// takeSkipped returns the packed-row members counted (SkipRows) since the
// last call, and forgets them.
func (s *LineScanner) takeSkipped() rowSummary {
	r := s.skipped
	s.skipped = rowSummary{}
	return r
}

// Bad reports whether a bad line was seen (the rest is a torn tail).
func (s *LineScanner) Bad() bool { return s.bad }

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
func parseHeaderLine(line []byte) (*Header, error) {
	h, err := ParseHeader(line)
	if err != nil {
		return nil, err
	}
	if v, ok := safeInt(h.fields["version"]); !ok || v != 0 {
		return nil, unsupportedf("session format version %s is not supported (want 0)", string(compact(h.fields["version"])))
	}
	return h, nil
}

// backendf is a corruption detected by the backend read (dsh maps these to
// SESSION_QUERY_PERSISTENCE_FAILED, not CORRUPT_SESSION).
func backendf(format string, args ...any) *logError {
	return &logError{kind: KindCorrupt, msg: fmt.Sprintf(format, args...), backend: true}
}

func markBackend(err error) error {
	var le *logError
	if errors.As(err, &le) {
		c := *le
		c.backend = true
		return &c
	}
	return err
}
