package sessionstore

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
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
	return physicalAbs(p)
}

// physicalAbs makes p absolute as the kernel resolves it: filepath.Abs
// cleans "sl/.." as text even when sl is a symlink, so the longest existing
// prefix of p up to its last ".." goes through filepath.EvalSymlinks and
// the rest is only cleaned (the root itself may be a symlink, kept as
// given). Windows resolves ".." as text, as filepath.Abs does.
func physicalAbs(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil || runtime.GOOS == "windows" {
		return abs, err
	}
	if !filepath.IsAbs(p) {
		wd, err := os.Getwd()
		if err != nil {
			return abs, nil
		}
		p = wd + string(filepath.Separator) + p
	}
	comps := strings.Split(p, string(filepath.Separator))
	last := -1
	for i, c := range comps {
		if c == ".." {
			last = i
		}
	}
	if last < 0 {
		return abs, nil
	}
	for k := last + 1; k > 0; k-- {
		head := strings.Join(comps[:k], string(filepath.Separator))
		if head == "" {
			head = string(filepath.Separator)
		}
		if r, err := filepath.EvalSymlinks(head); err == nil {
			return filepath.Join(append([]string{r}, comps[k:]...)...), nil
		}
	}
	return abs, nil
}
