package transcript

import (
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

	// fields keeps the raw header values for strict validation.
	fields object
}

// errNotHeader marks a first line that is not header-shaped: listing skips
// such a session, a targeted read fails with it.
var errNotHeader = Corruptf("first line is not a session header")

// ParseHeader parses a header line (without its "\n") the way dsh's
// isHeaderLine/fromHeaderLine do: the shape must match (type "session",
// numeric version/createdAt/delegationDepth, string id, optional fields of
// the right types). It does not check the version number or the value
// rules of validateSessionHeader; Header.Validate does. A header carrying
// the retired fields sandboxMode or approvalPolicy is an error, and so is
// a header over the size bounds (MaxHeaderLineBytes, MaxCWDBytes; an error
// matching ErrFieldLimit).
func ParseHeader(line []byte) (*Header, error) {
	if len(line) > MaxHeaderLineBytes {
		return nil, fieldLimitf("the header line is %d bytes, more than dsh-lsp's bound of %d bytes", len(line), MaxHeaderLineBytes)
	}
	o, ok := parseObject(jsjson.RepairUTF8(line))
	if !ok {
		return nil, errNotHeader
	}
	h := &Header{fields: o}
	if !h.readRequired(o) || !h.readOptional(o) {
		return nil, errNotHeader
	}
	if h.CWD != nil && len(*h.CWD) > MaxCWDBytes {
		return nil, fieldLimitf("the header cwd is %d bytes, more than dsh-lsp's bound of %d bytes", len(*h.CWD), MaxCWDBytes)
	}
	if v, present := o["seedLength"]; present {
		n, ok := intLike(v)
		if !ok {
			return nil, errNotHeader
		}
		h.SeedLength = &n
	}
	for _, retired := range [...]string{"sandboxMode", "approvalPolicy"} {
		if _, bad := o[retired]; bad {
			return nil, Corruptf("session header carries the retired field %s", retired)
		}
	}
	return h, nil
}

// readRequired reads the type tag and the required fields of header
// object o; it reports false when one is missing or of the wrong type.
func (h *Header) readRequired(o object) bool {
	if t, ok := str(o["type"]); !ok || t != "session" {
		return false
	}
	var okID, okV, okC, okD bool
	h.ID, okID = str(o["id"])
	h.Version, okV = intLike(o["version"])
	h.CreatedAt, okC = intLike(o["createdAt"])
	h.DelegationDepth, okD = intLike(o["delegationDepth"])
	return okID && okV && okC && okD
}

// readOptional reads the optional string fields of header object o; it
// reports false when one is present but not a string.
func (h *Header) readOptional(o object) bool {
	for _, f := range [...]struct {
		key string
		dst **string
	}{{"cwd", &h.CWD}, {"parentSession", &h.ParentSession}, {"origin", &h.Origin}, {"agentPreset", &h.AgentPreset}} {
		v, present := o[f.key]
		if !present {
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

// intLike accepts any JSON number (shape check only); the value is
// truncated. Validate checks the integer rules.
func intLike(v json.RawMessage) (int64, bool) {
	f, ok := number(v)
	if !ok {
		return 0, false
	}
	return int64(f), true
}

// Validate applies validateSessionHeader (spec §2.2, §4 step 6): version
// 0 (else unsupported), non-empty id, non-negative safe-integer createdAt,
// delegationDepth and seedLength, absolute cwd, origin "subagent".
func (h *Header) Validate() error {
	if v, ok := safeInt(h.fields["version"]); !ok || v != 0 {
		return unsupportedf("session format version %s is not supported (want 0)", string(Compact(h.fields["version"])))
	}
	if h.ID == "" {
		return Corruptf("session header id is empty")
	}
	if n, ok := nonNegSafeInt(h.fields["createdAt"]); !ok || isNegZero(h.fields["createdAt"]) {
		return Corruptf("session header createdAt %s is not a non-negative safe integer", string(Compact(h.fields["createdAt"])))
	} else {
		h.CreatedAt = n
	}
	if _, ok := nonNegSafeInt(h.fields["delegationDepth"]); !ok {
		return Corruptf("session header delegationDepth is not a non-negative safe integer")
	}
	if v, present := h.fields["seedLength"]; present {
		if _, ok := nonNegSafeInt(v); !ok {
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

// Object returns the header as readSurface's "session" object: version,
// id, createdAt, cwd?, parentSession?, seedLength?, origin?,
// delegationDepth, agentPreset? (the "type" tag and unknown keys dropped).
func (h *Header) Object() json.RawMessage {
	w := jsjson.NewObject(nil)
	w.Raw("version", Compact(h.fields["version"])).String("id", h.ID).Raw("createdAt", Compact(h.fields["createdAt"]))
	if h.CWD != nil {
		w.String("cwd", *h.CWD)
	}
	if h.ParentSession != nil {
		w.String("parentSession", *h.ParentSession)
	}
	if h.SeedLength != nil {
		w.Raw("seedLength", Compact(h.fields["seedLength"]))
	}
	if h.Origin != nil {
		w.String("origin", *h.Origin)
	}
	w.Raw("delegationDepth", Compact(h.fields["delegationDepth"]))
	if h.AgentPreset != nil {
		w.String("agentPreset", *h.AgentPreset)
	}
	return w.Bytes()
}

// Reference returns the header in the core's form.
func (h *Header) Reference() reference.SessionHeader {
	return reference.SessionHeader{ID: h.ID, CWD: h.CWD, CreatedAt: h.CreatedAt, Raw: h.Object()}
}

// ParseHeaderLine parses and version-checks the header (spec §4 step 1: a
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

// isAbsCwd reports whether a header cwd is absolute by the rule of the
// platform dsh runs on (spec §2.2: "dsh uses the host platform's
// isAbsolute"). On Windows that is Node's path.win32.isAbsolute, which
// also accepts POSIX-style "/home/alice" and rooted "\\x" paths that Go's
// filepath.IsAbs refuses there: a store written on Linux and read on
// Windows (or a Windows dsh given such a cwd) stays readable.
func isAbsCwd(cwd string) bool { return isAbsCwdOn(runtime.GOOS, cwd) }

// isAbsCwdOn is isAbsCwd for a given GOOS, so every rule is tested on
// every build machine.
func isAbsCwdOn(goos, cwd string) bool {
	if goos != "windows" {
		// path.posix.isAbsolute.
		return strings.HasPrefix(cwd, "/")
	}
	// path.win32.isAbsolute: a leading separator (rooted or UNC), or a
	// drive letter, a colon and a separator. "C:" and "C:foo" are
	// drive-relative, not absolute.
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
