package sessionstore

import (
	"errors"
	"path/filepath"
	"unicode/utf16"
	"unicode/utf8"
)

// noCwdDir is the project directory of sessions without a cwd.
const noCwdDir = "_no-cwd"

func isSegmentUnit(u uint16) bool {
	return u >= 'A' && u <= 'Z' || u >= 'a' && u <= 'z' || u >= '0' && u <= '9' || u == '.' || u == '_' || u == '-'
}

const upperHex = "0123456789ABCDEF"

func appendUnitEscape(b []byte, u uint16) []byte {
	return append(b, '~', upperHex[u>>12], upperHex[(u>>8)&0xf], upperHex[(u>>4)&0xf], upperHex[u&0xf])
}

// utf16Units returns the UTF-16 code units of s. WTF-8 encoded lone
// surrogates (see package reference) become their single unit.
func utf16Units(s string) []uint16 {
	var units []uint16
	for i := 0; i < len(s); {
		if i+2 < len(s) && s[i] == 0xED && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2] >= 0x80 && s[i+2] <= 0xBF {
			units = append(units, 0xD000|uint16(s[i+1]&0x3F)<<6|uint16(s[i+2]&0x3F))
			i += 3
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		units = utf16.AppendRune(units, r)
		i += size
	}
	return units
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
	var b []byte
	for _, u := range utf16Units(id) {
		if isSegmentUnit(u) {
			b = append(b, byte(u))
		} else {
			b = appendUnitEscape(b, u)
		}
	}
	return string(b), nil
}

// ProjectKey is dsh's lossy project directory name for a cwd (spec §1.2),
// "--<slug>--".
func ProjectKey(cwd string) (string, error) {
	if cwd == "" {
		return "", errors.New("cwd is empty")
	}
	var b []byte
	inSep := false
	for _, u := range utf16Units(cwd) {
		switch {
		case u == '/' || u == '\\' || u == ':':
			if !inSep {
				b = append(b, '-')
				inSep = true
			}
		case isSegmentUnit(u):
			b = append(b, byte(u))
			inSep = false
		default:
			b = appendUnitEscape(b, u)
			inSep = false
		}
	}
	i := 0
	for i < len(b) && b[i] == '-' {
		i++
	}
	slug := b[i:]
	if len(slug) == 0 {
		slug = []byte("root")
	}
	if len(slug) > 251 {
		slug = slug[:251]
	}
	return "--" + string(slug) + "--", nil
}

// SessionPath returns the transcript path of a session (spec §1.2).
func SessionPath(root string, cwd *string, id string, enc Encoding) (string, error) {
	project := noCwdDir
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
	return filepath.Join(root, project, seg, enc.FileName()), nil
}
