package sessionstore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/dsh-lsp/dsh-lsp/internal/beneath"
)

// ResolveRoot returns the store root: flag (or setting) when non-empty,
// else $DSH_HOME/sessions when DSH_HOME is set and not blank, else
// ~/.dsh/sessions. A leading "~", "~/" or "~\" is expanded against the OS
// home and the result is made absolute, as dsh's dshHomePath does.
func ResolveRoot(flag string) (string, error) {
	if flag != "" {
		return absHome(flag)
	}
	if h := os.Getenv("DSH_HOME"); strings.TrimSpace(h) != "" {
		home, err := absHome(h)
		if err != nil {
			return "", err
		}
		return filepath.Join(home, "sessions"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", errors.New("cannot resolve the dsh session store: no --sessions given, DSH_HOME unset and no home directory: " + err.Error())
	}
	return filepath.Join(home, ".dsh", "sessions"), nil
}

// absHome expands a leading ~ and makes p absolute, as dsh's
// expandHomePath + path.resolve ("~\x" is home/x on every OS).
func absHome(p string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, `~\`) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", errors.New("cannot expand " + p + ": " + err.Error())
		}
		p = filepath.Join(home, p[min(2, len(p)):])
	}
	return beneath.Abs(p)
}
