package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// epoch is the fixed modification time of every archive entry.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// member is one file of an archive.
type member struct {
	name string
	mode fs.FileMode
	data []byte
}

func archiveMain(args []string) error {
	fl := flag.NewFlagSet("archive", flag.ContinueOnError)
	version := fl.String("version", "", "release version (in file names)")
	bin := fl.String("bin", "", "directory holding <goos>-<goarch>/dsh-lsp[.exe]")
	out := fl.String("out", "", "output directory")
	license := fl.String("license", "LICENSE", "license file to include")
	readme := fl.String("readme", "README.md", "readme file to include")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *version == "" || *bin == "" || *out == "" {
		return fmt.Errorf("archive needs -version, -bin and -out")
	}
	lic, err := os.ReadFile(*license)
	if err != nil {
		return err
	}
	rd, err := os.ReadFile(*readme)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	for _, t := range targets {
		exePath := filepath.Join(*bin, t.GOOS+"-"+t.GOARCH, t.exe())
		exe, err := os.ReadFile(exePath)
		if err != nil {
			return fmt.Errorf("%s: %w", t.GOOS+"/"+t.GOARCH, err)
		}
		if _, err := checkBinary(t, bytes.NewReader(exe)); err != nil {
			return fmt.Errorf("%s: %w", exePath, err)
		}
		dir := t.dirName(*version)
		members := []member{
			{dir + "/" + t.exe(), 0o755, exe},
			{dir + "/LICENSE", 0o644, lic},
			{dir + "/README.md", 0o644, rd},
		}
		var data []byte
		if t.GOOS == "windows" {
			data, err = zipBytes(members)
		} else {
			data, err = tarGzBytes(members)
		}
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(*out, t.archiveName(*version)), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func sumsMain(args []string) error {
	fl := flag.NewFlagSet("sums", flag.ContinueOnError)
	dir := fl.String("dir", "", "release directory")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return fmt.Errorf("sums needs -dir")
	}
	return writeSums(*dir)
}

func tarGzBytes(members []member) ([]byte, error) {
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	gz.ModTime = epoch
	tw := tar.NewWriter(gz)
	for _, m := range members {
		hdr := &tar.Header{Name: m.name, Mode: int64(m.mode), Size: int64(len(m.data)), ModTime: epoch, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(m.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func zipBytes(members []member) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range members {
		hdr := &zip.FileHeader{Name: m.name, Method: zip.Deflate, Modified: epoch}
		hdr.SetMode(m.mode)
		w, err := zw.CreateHeader(hdr)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(m.data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeSums writes dir/SHA256SUMS over every other regular file in dir, in
// the format `sha256sum -c` reads.
func writeSums(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && e.Name() != "SHA256SUMS" {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(sum[:]), n)
	}
	return os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(b.String()), 0o644)
}
