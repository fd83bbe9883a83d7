package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestCheckBinary: the running test binary passes as its own platform and
// fails as every other one; files that are not executables fail everywhere.
func TestCheckBinary(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	own := 0
	for _, tg := range targets {
		_, err := checkBinary(tg, bytes.NewReader(exe))
		if tg.GOOS == runtime.GOOS && tg.GOARCH == runtime.GOARCH {
			own++
			if err != nil {
				t.Errorf("%s/%s: the test binary itself is refused: %v", tg.GOOS, tg.GOARCH, err)
			}
		} else if err == nil {
			t.Errorf("%s/%s: a %s/%s binary is accepted", tg.GOOS, tg.GOARCH, runtime.GOOS, runtime.GOARCH)
		}
		for name, junk := range map[string][]byte{
			"empty":     nil,
			"text":      []byte("#!/bin/sh\necho dsh-lsp\n"),
			"truncated": exe[:64],
		} {
			if _, err := checkBinary(tg, bytes.NewReader(junk)); err == nil {
				t.Errorf("%s/%s: %s input accepted", tg.GOOS, tg.GOARCH, name)
			}
		}
	}
	if own != 1 {
		t.Logf("%s/%s is not a release target: only refusals were checked", runtime.GOOS, runtime.GOARCH)
	}
}

// TestSums: SHA256SUMS covers every artifact, and a changed or an unlisted
// artifact is reported.
func TestSums(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.tar.gz", "a")
	write("b.zip", "b")
	if err := writeSums(dir); err != nil {
		t.Fatal(err)
	}
	if err := checkSums(dir); err != nil {
		t.Fatalf("fresh sums: %v", err)
	}
	write("b.zip", "tampered")
	if err := checkSums(dir); err == nil || !strings.Contains(err.Error(), "b.zip: checksum mismatch") {
		t.Errorf("tampered file: %v", err)
	}
	write("b.zip", "b")
	write("c.vsix", "c")
	if err := checkSums(dir); err == nil || !strings.Contains(err.Error(), "c.vsix has no checksum line") {
		t.Errorf("unlisted file: %v", err)
	}
}

// TestVerifyReportsMissing: an empty directory fails with one line per
// missing artifact instead of stopping at the first.
func TestVerifyReportsMissing(t *testing.T) {
	var out bytes.Buffer
	err := verify(t.TempDir(), "v1.2.3", "1.2.3", &out)
	if err == nil {
		t.Fatal("an empty release directory verified")
	}
	if n := strings.Count(out.String(), "FAIL"); n != 1+2*len(targets) {
		t.Errorf("%d FAIL lines, want %d:\n%s", n, 1+2*len(targets), out.String())
	}
	for _, want := range []string{"dsh-lsp_v1.2.3_windows_arm64.zip", "dsh-lsp-darwin-x64-1.2.3.vsix", "dsh-lsp_v1.2.3_linux_amd64.tar.gz"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no line for %s:\n%s", want, out.String())
		}
	}
}
