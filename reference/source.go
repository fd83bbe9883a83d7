package reference

import (
	"context"
	"encoding/json"
)

// SessionHeader is the part of a dsh session header that references use.
type SessionHeader struct {
	ID string
	// CWD is nil when the header has no cwd.
	CWD       *string
	CreatedAt int64
	// Raw is the complete header object as dsh's readSurface returns it
	// (a copy of the header line), used verbatim in Surface.Session.
	Raw json.RawMessage
}

// TitleResult is the outcome of reading one session's latest title.
type TitleResult struct {
	SessionID string
	// Title is the latest session/title event's title, nil when the log has
	// no title event. An empty title is kept.
	Title *string
	// Err is non-nil when the title read was rejected (not found, corrupt
	// log, malformed title data, ...). Only this id is affected.
	Err error
}

// Label is the session's label in a candidate list: its latest title, else
// its id (no title, or the title read was rejected).
func (t TitleResult) Label() string {
	if t.Err == nil && t.Title != nil {
		return *t.Title
	}
	return t.SessionID
}

// SurfaceEvent is one event of the folded surface, after legacy upgrade.
type SurfaceEvent struct {
	Type string
	Seq  int64
	// Data is the event's data object.
	Data json.RawMessage
	// Raw is the complete event object (type, seq, time, data, surfaceOp,
	// sourceEventSeqs, ignorable), as readSurface returns it.
	Raw json.RawMessage
}

// Surface is dsh's SessionSurfaceSnapshot: the model-visible history of one
// session at read time.
type Surface struct {
	// Session is the header object (Raw of the header).
	Session json.RawMessage
	// Header is the parsed header.
	Header SessionHeader
	// CapturedThroughSeq is the seq of the last event of the loaded log
	// (crash closers included), nil for an empty log.
	CapturedThroughSeq *int64
	// Events are the surface events in surface (model-history) order.
	Events []SurfaceEvent
}

// Source is the session query service the core reads sessions through
// (dsh ctx.sessionQuery). Implementations must be safe for concurrent use
// and must honour ctx cancellation.
type Source interface {
	// ListSessions returns every session header, newest createdAt first,
	// ties by id in JS localeCompare (ICU root collation) order.
	ListSessions(ctx context.Context) ([]SessionHeader, error)
	// ReadTitles returns one result per unique id, in first-occurrence
	// order. Per-id failures go in TitleResult.Err; only cancellation (or a
	// failure affecting every id) returns an error.
	ReadTitles(ctx context.Context, ids []string) ([]TitleResult, error)
	// ReadSurface reads and folds one session. Errors say what failed and
	// where; a missing session gives an error whose message is
	// `session "<id>" not found` (JSON-quoted id).
	ReadSurface(ctx context.Context, id string) (*Surface, error)
}
