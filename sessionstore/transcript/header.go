package transcript

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// Header is a parsed session header line (spec §2.2).
type Header struct {
	Version   int64
	ID        string
	CreatedAt int64
	// CWD is nil when the header has no cwd.
	CWD             *string
	ParentSession   *string
	SeedLength      *int64
	Origin          *string
	DelegationDepth int64
	AgentPreset     *string

	// The raw number values, for Validate and Object.
	version, createdAt, delegationDepth, seedLength json.RawMessage
}

// errNotHeader marks a first line that is not header-shaped.
var errNotHeader = Corruptf("first line is not a session header")

// ParseHeader parses a header line the way dsh's isHeaderLine and
// fromHeaderLine do, checking its shape and the size bounds but not the
// value rules (Validate) or the version (ParseHeaderLine).
func ParseHeader(line []byte) (*Header, error) {
	if len(line) > MaxHeaderLineBytes {
		return nil, fieldLimitf("the header line is %d bytes, more than dsh-lsp's bound of %d bytes", len(line), MaxHeaderLineBytes)
	}
	o, ok := parseObj(bytes.Clone(jsjson.RepairUTF8(line)))
	if !ok {
		return nil, errNotHeader
	}
	h := &Header{version: o.get("version"), createdAt: o.get("createdAt"),
		delegationDepth: o.get("delegationDepth"), seedLength: o.get("seedLength")}
	if !h.readRequired(o) || !h.readOptional(o) {
		return nil, errNotHeader
	}
	if h.CWD != nil && len(*h.CWD) > MaxCWDBytes {
		return nil, fieldLimitf("the header cwd is %d bytes, more than dsh-lsp's bound of %d bytes", len(*h.CWD), MaxCWDBytes)
	}
	if h.seedLength != nil {
		n, ok := intLike(h.seedLength)
		if !ok {
			return nil, errNotHeader
		}
		h.SeedLength = &n
	}
	for _, retired := range [...]string{"sandboxMode", "approvalPolicy"} {
		if o.get(retired) != nil {
			return nil, Corruptf("session header carries the retired field %s", retired)
		}
	}
	return h, nil
}

// readRequired reads the type tag and the required fields of o.
func (h *Header) readRequired(o obj) bool {
	if t, ok := str(o.get("type")); !ok || t != "session" {
		return false
	}
	var okID, okV, okC, okD bool
	h.ID, okID = str(o.get("id"))
	h.Version, okV = intLike(h.version)
	h.CreatedAt, okC = intLike(h.createdAt)
	h.DelegationDepth, okD = intLike(h.delegationDepth)
	return okID && okV && okC && okD
}

// readOptional reads the optional string fields of o.
func (h *Header) readOptional(o obj) bool {
	for _, f := range [...]struct {
		key string
		dst **string
	}{{"cwd", &h.CWD}, {"parentSession", &h.ParentSession}, {"origin", &h.Origin}, {"agentPreset", &h.AgentPreset}} {
		v := o.get(f.key)
		if v == nil {
			continue
		}
		s, ok := str(v)
		if !ok {
			return false
		}
		*f.dst = &s
	}
	return true
}

// intLike accepts any JSON number, truncated (Validate checks the rest).
func intLike(v json.RawMessage) (int64, bool) {
	f, ok := number(v)
	if !ok {
		return 0, false
	}
	return int64(f), true
}

// Validate applies dsh's validateSessionHeader (spec §2.2, §4 step 6).
func (h *Header) Validate() error {
	if err := h.checkVersion(); err != nil {
		return err
	}
	if h.ID == "" {
		return Corruptf("session header id is empty")
	}
	if n, ok := nonNegSafeInt(h.createdAt); !ok || isNegZero(h.createdAt) {
		return Corruptf("session header createdAt %s is not a non-negative safe integer", string(Compact(h.createdAt)))
	} else {
		h.CreatedAt = n
	}
	if _, ok := nonNegSafeInt(h.delegationDepth); !ok {
		return Corruptf("session header delegationDepth is not a non-negative safe integer")
	}
	if h.seedLength != nil {
		if _, ok := nonNegSafeInt(h.seedLength); !ok {
			return Corruptf("session header seedLength is not a non-negative safe integer")
		}
	}
	if h.CWD != nil && !isAbsCwd(*h.CWD) {
		return Corruptf("session header cwd %s is not absolute", jsjson.Quote(*h.CWD))
	}
	if h.Origin != nil && *h.Origin != "subagent" {
		return Corruptf("session header origin %s is not \"subagent\"", jsjson.Quote(*h.Origin))
	}
	return nil
}

func isNegZero(v json.RawMessage) bool {
	f, ok := number(v)
	return ok && f == 0 && len(v) > 0 && jsonKind(v) == '-'
}

// Object returns the header as readSurface's "session" object (without
// the type tag and unknown keys).
func (h *Header) Object() json.RawMessage {
	w := jsjson.NewObject(nil)
	w.Raw("version", Compact(h.version)).String("id", h.ID).Raw("createdAt", Compact(h.createdAt))
	if h.CWD != nil {
		w.String("cwd", *h.CWD)
	}
	if h.ParentSession != nil {
		w.String("parentSession", *h.ParentSession)
	}
	if h.SeedLength != nil {
		w.Raw("seedLength", Compact(h.seedLength))
	}
	if h.Origin != nil {
		w.String("origin", *h.Origin)
	}
	w.Raw("delegationDepth", Compact(h.delegationDepth))
	if h.AgentPreset != nil {
		w.String("agentPreset", *h.AgentPreset)
	}
	return w.Bytes()
}

// Reference returns the header in the core's form.
func (h *Header) Reference() reference.SessionHeader {
	return reference.SessionHeader{ID: h.ID, CWD: h.CWD, CreatedAt: h.CreatedAt, Raw: h.Object()}
}

// ParseHeaderLine parses and version-checks the header (spec §4 step 1).
func ParseHeaderLine(line []byte) (*Header, error) {
	h, err := ParseHeader(line)
	if err == nil {
		err = h.checkVersion()
	}
	if err != nil {
		return nil, err
	}
	return h, nil
}

// checkVersion refuses a format version other than 0.
func (h *Header) checkVersion() error {
	if v, ok := safeInt(h.version); !ok || v != 0 {
		return unsupportedf("session format version %s is not supported (want 0)", string(Compact(h.version)))
	}
	return nil
}

// isAbsCwd reports whether a header cwd is absolute by Node's isAbsolute
// on this platform (spec §2.2); on Windows that accepts "/home/alice".
func isAbsCwd(cwd string) bool { return isAbsCwdOn(runtime.GOOS, cwd) }

// isAbsCwdOn is isAbsCwd for a given GOOS.
func isAbsCwdOn(goos, cwd string) bool {
	if goos != "windows" {
		return strings.HasPrefix(cwd, "/")
	}
	// A leading separator, or a drive letter, a colon and a separator.
	if cwd == "" {
		return false
	}
	if isWinSep(cwd[0]) {
		return true
	}
	c := cwd[0]
	return len(cwd) > 2 && (c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') && cwd[1] == ':' && isWinSep(cwd[2])
}

func isWinSep(c byte) bool { return c == '/' || c == '\\' }
