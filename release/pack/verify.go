package main

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// vsixName is the platform package of t for extension version ext.
func vsixName(t target, ext string) string {
	return fmt.Sprintf("dsh-lsp-%s-%s.vsix", t.VSCode, ext)
}

func verifyMain(args []string, out io.Writer) error {
	fl := flag.NewFlagSet("verify", flag.ContinueOnError)
	version := fl.String("version", "", "release version (in archive names)")
	extVersion := fl.String("ext-version", "", "extension version (in .vsix names)")
	dir := fl.String("dir", "", "release directory")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *version == "" || *extVersion == "" || *dir == "" {
		return errors.New("verify needs -version, -ext-version and -dir")
	}
	return verify(*dir, *version, *extVersion, out)
}

// verify checks a release directory; every problem is reported, the first
// one is returned.
func verify(dir, version, extVersion string, out io.Writer) error {
	var errs []error
	fail := func(format string, a ...any) {
		err := fmt.Errorf(format, a...)
		fmt.Fprintln(out, "FAIL", err)
		errs = append(errs, err)
	}
	if err := checkSums(dir); err != nil {
		fail("SHA256SUMS: %v", err)
	} else {
		fmt.Fprintln(out, "ok   SHA256SUMS matches every file")
	}
	for _, t := range targets {
		name := t.archiveName(version)
		exe, err := readArchiveMember(filepath.Join(dir, name), t.dirName(version)+"/"+t.exe())
		if err != nil {
			fail("%s: %v", name, err)
		} else if what, err := checkBinary(t, bytes.NewReader(exe)); err != nil {
			fail("%s: %s: %v", name, t.exe(), err)
		} else {
			fmt.Fprintf(out, "ok   %s: %s\n", name, what)
		}
		vname := vsixName(t, extVersion)
		if what, err := checkVSIX(filepath.Join(dir, vname), t); err != nil {
			fail("%s: %v", vname, err)
		} else {
			fmt.Fprintf(out, "ok   %s: %s\n", vname, what)
		}
	}
	return errors.Join(errs...)
}

// checkSums recomputes every line of dir/SHA256SUMS and requires a line for
// each archive and .vsix in dir.
func checkSums(dir string) error {
	f, err := os.Open(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		return err
	}
	defer f.Close()
	listed := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			return fmt.Errorf("bad line %q", sc.Text())
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		got := sha256.Sum256(data)
		if hex.EncodeToString(got[:]) != sum {
			return fmt.Errorf("%s: checksum mismatch", name)
		}
		listed[name] = true
	}
	if err := sc.Err(); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		n := e.Name()
		if (strings.HasSuffix(n, ".tar.gz") || strings.HasSuffix(n, ".zip") || strings.HasSuffix(n, ".vsix")) && !listed[n] {
			return fmt.Errorf("%s has no checksum line", n)
		}
	}
	return nil
}

// readArchiveMember returns one file of a .tar.gz or .zip archive.
func readArchiveMember(path, member string) ([]byte, error) {
	if strings.HasSuffix(path, ".zip") || strings.HasSuffix(path, ".vsix") {
		zr, err := zip.OpenReader(path)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		for _, f := range zr.File {
			if f.Name == member {
				rc, err := f.Open()
				if err != nil {
					return nil, err
				}
				defer rc.Close()
				return io.ReadAll(rc)
			}
		}
		return nil, fmt.Errorf("no %s inside", member)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil, fmt.Errorf("no %s inside", member)
		}
		if err != nil {
			return nil, err
		}
		if hdr.Name == member {
			if hdr.FileInfo().Mode().Perm()&0o111 == 0 {
				return nil, fmt.Errorf("%s is not executable (mode %v)", member, hdr.FileInfo().Mode())
			}
			return io.ReadAll(tr)
		}
	}
}

var targetPlatformRE = regexp.MustCompile(`TargetPlatform="([^"]*)"`)

// checkVSIX checks that a platform .vsix declares target t and carries
// exactly one server binary, the one for t.
func checkVSIX(path string, t target) (string, error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return "", err
	}
	defer zr.Close()
	want := "extension/bin/" + t.VSCode + "/" + t.exe()
	var exe, manifest []byte
	for _, f := range zr.File {
		if strings.HasPrefix(f.Name, "extension/bin/") && !strings.HasSuffix(f.Name, "/") && f.Name != want {
			return "", fmt.Errorf("carries %s, a binary for another platform", f.Name)
		}
		if f.Name == want || f.Name == "extension.vsixmanifest" {
			rc, err := f.Open()
			if err != nil {
				return "", err
			}
			data, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				return "", err
			}
			if f.Name == want {
				exe = data
			} else {
				manifest = data
			}
		}
	}
	if exe == nil {
		return "", fmt.Errorf("no %s inside", want)
	}
	got := "none"
	if m := targetPlatformRE.FindSubmatch(manifest); m != nil {
		got = string(m[1])
	}
	if got != t.VSCode {
		return "", fmt.Errorf("extension.vsixmanifest names target %q, want %q", got, t.VSCode)
	}
	what, err := checkBinary(t, bytes.NewReader(exe))
	if err != nil {
		return "", fmt.Errorf("%s: %v", want, err)
	}
	return fmt.Sprintf("target %s, %s: %s", t.VSCode, want, what), nil
}
