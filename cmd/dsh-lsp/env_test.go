package main

import (
	"os"
	"path/filepath"
)

// cleanEnv is a minimal environment for running the binary with home as
// the user's home on every OS: HOME (os.UserHomeDir on Unix), USERPROFILE
// and LocalAppData (os.UserHomeDir and os.UserCacheDir on Windows),
// SystemRoot (Windows programs need it to load system DLLs) and PATH, plus
// extra "KEY=value" entries.
func cleanEnv(home string, extra ...string) []string {
	env := []string{
		"HOME=" + home,
		"USERPROFILE=" + home,
		"LocalAppData=" + filepath.Join(home, "AppData", "Local"),
		"PATH=" + os.Getenv("PATH"),
	}
	if root := os.Getenv("SystemRoot"); root != "" {
		env = append(env, "SystemRoot="+root)
	}
	return append(env, extra...)
}
