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

// utf16Units returns the UTF-16 code units of s. WTF-8 encoded lone
// surrogates (see package reference) become their single unit.
func utf16Units(s string) []uint16 {
	var units []uint16
	for i := 0; i < len(s); {
		if r, ok := jsjson.SurrogateAt(s, i); ok {
			units = append(units, uint16(r))
			i += 3
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		units = utf16.AppendRune(units, r)
		i += size
	}
	return units
}

// escapeUnits writes s as dsh does: a segment unit as itself, any other
// UTF-16 unit as ~XXXX; for a slug, a run of '/', '\' and ':' becomes one
// '-'.
func escapeUnits(s string, slug bool) []byte {
	var b []byte
	inSep := false
	for _, u := range utf16Units(s) {
		switch {
		case slug && (u == '/' || u == '\\' || u == ':'):
			if !inSep {
				b = append(b, '-')
			}
			inSep = true
			continue
		case isSegmentUnit(u):
			b = append(b, byte(u))
		default:
			b = append(b, '~', upperHex[u>>12], upperHex[(u>>8)&0xf], upperHex[(u>>4)&0xf], upperHex[u&0xf])
		}
		inSep = false
	}
	return b
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
	return string(escapeUnits(id, false)), nil
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
	slug := bytes.TrimLeft(escapeUnits(cwd, true), "-")
	if len(slug) == 0 {
		slug = []byte("root")
	}
	return "--" + string(slug[:min(len(slug), 251)]) + "--", nil
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
