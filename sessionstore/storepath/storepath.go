// Package storepath names a session's directory in a dsh store as dsh
// does (spec §1.2): <root>/<ProjectKey(cwd)>/<EncodeSegment(id)>/, or
// <root>/_no-cwd/<EncodeSegment(id)>/ for a session without a cwd.
// EncodeSegment is injective, so a session's directory is found from its
// id alone; ProjectKey is lossy (two cwds may share a project directory).
package storepath

import (
	"bytes"
	"errors"
	"path/filepath"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// NoCwd is the project directory of sessions without a cwd.
const NoCwd = "_no-cwd"

// isSegmentUnit reports whether dsh writes the UTF-16 unit u as itself.
func isSegmentUnit(u uint16) bool {
	return u >= 'A' && u <= 'Z' || u >= 'a' && u <= 'z' || u >= '0' && u <= '9' || u == '.' || u == '_' || u == '-'
}

const upperHex = "0123456789ABCDEF"

// escapeUnits appends s to b as dsh writes it: a segment unit as itself,
// any other UTF-16 unit as ~XXXX; for a slug, a run of '/', '\' and ':'
// becomes one '-'. The units are taken as it goes (WTF-8 encoded lone
// surrogates, see package reference, are their single unit): a first pass
// checks every session's path, and a slice of them was about a third of
// that check's allocations.
func escapeUnits(b []byte, s string, slug bool) []byte {
	e := unitEscaper{b: b, slug: slug}
	for i := 0; i < len(s); {
		if r, ok := jsjson.SurrogateAt(s, i); ok {
			e.unit(uint16(r))
			i += 3
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
			e.unit(uint16(r1))
			e.unit(uint16(r2))
		} else {
			e.unit(uint16(r)) // not a pair: a BMP rune (a decoded rune is no surrogate)
		}
		i += size
	}
	return e.b
}

// unitEscaper is escapeUnits's output and whether it is in a run of
// separators.
type unitEscaper struct {
	b           []byte
	slug, inSep bool
}

func (e *unitEscaper) unit(u uint16) {
	switch {
	case e.slug && (u == '/' || u == '\\' || u == ':'):
		if !e.inSep {
			e.b = append(e.b, '-')
		}
		e.inSep = true
		return
	case isSegmentUnit(u):
		e.b = append(e.b, byte(u))
	default:
		e.b = append(e.b, '~', upperHex[u>>12], upperHex[(u>>8)&0xf], upperHex[(u>>4)&0xf], upperHex[u&0xf])
	}
	e.inSep = false
}

// EncodeSegment is dsh's injective escaping of a session id into one path
// component (spec §1.2).
func EncodeSegment(id string) (string, error) {
	switch id {
	case "":
		return "", errors.New("session id is empty")
	case ".":
		return "~002E", nil
	case "..":
		return "~002E~002E", nil
	}
	if plainSegment(id) {
		// Its own segment (dsh's uuids are): no copy, so a lookup by id
		// allocates nothing.
		return id, nil
	}
	return string(escapeUnits(make([]byte, 0, len(id)), id, false)), nil
}

// plainSegment reports whether every byte of s is a segment unit.
func plainSegment(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf || !isSegmentUnit(uint16(s[i])) {
			return false
		}
	}
	return true
}

// ProjectKey is dsh's lossy project directory name for a cwd (spec §1.2),
// "--<slug>--".
func ProjectKey(cwd string) (string, error) {
	if cwd == "" {
		return "", errors.New("cwd is empty")
	}
	b := escapeUnits(append(make([]byte, 0, len(cwd)+8), "--"...), cwd, true)
	slug := bytes.TrimLeft(b[2:], "-")
	if len(slug) == 0 {
		return "--root--", nil
	}
	n := copy(b[2:], slug[:min(len(slug), 251)])
	return string(append(b[:2+n], "--"...)), nil
}

// Dir returns the directory of a session under root: its project
// directory (ProjectKey of cwd, NoCwd when cwd is nil) and its segment.
func Dir(root string, cwd *string, id string) (string, error) {
	project := NoCwd
	if cwd != nil {
		var err error
		if project, err = ProjectKey(*cwd); err != nil {
			return "", err
		}
	}
	seg, err := EncodeSegment(id)
	if err != nil {
		return "", err
	}
	return filepath.Join(root, project, seg), nil
}
