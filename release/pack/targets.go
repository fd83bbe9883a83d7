package main

import (
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"fmt"
	"io"
)

// target is one release platform: Go's GOOS/GOARCH and VS Code's
// platform name (vsce package --target).
type target struct {
	GOOS, GOARCH, VSCode string
}

// targets are the six release platforms.
var targets = []target{
	{"linux", "amd64", "linux-x64"},
	{"linux", "arm64", "linux-arm64"},
	{"darwin", "amd64", "darwin-x64"},
	{"darwin", "arm64", "darwin-arm64"},
	{"windows", "amd64", "win32-x64"},
	{"windows", "arm64", "win32-arm64"},
}

// exe is the binary's file name on the target.
func (t target) exe() string {
	if t.GOOS == "windows" {
		return "dsh-lsp.exe"
	}
	return "dsh-lsp"
}

// archiveName is the release archive of version v for t.
func (t target) archiveName(v string) string {
	ext := ".tar.gz"
	if t.GOOS == "windows" {
		ext = ".zip"
	}
	return t.dirName(v) + ext
}

// dirName is the top directory inside the archive.
func (t target) dirName(v string) string {
	return fmt.Sprintf("dsh-lsp_%s_%s_%s", v, t.GOOS, t.GOARCH)
}

// checkBinary reads an executable's header and reports an error unless it
// is an executable (not an object or library) for t's OS and architecture.
func checkBinary(t target, r io.ReaderAt) (string, error) {
	switch t.GOOS {
	case "linux":
		f, err := elf.NewFile(r)
		if err != nil {
			return "", fmt.Errorf("not an ELF file: %v", err)
		}
		want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[t.GOARCH]
		if f.Machine != want || f.Class != elf.ELFCLASS64 || f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
			return "", fmt.Errorf("ELF %s %s %s, want %s executable", f.Class, f.Machine, f.Type, want)
		}
		return fmt.Sprintf("ELF %s %s", f.Machine, f.Type), nil
	case "darwin":
		f, err := macho.NewFile(r)
		if err != nil {
			return "", fmt.Errorf("not a Mach-O file: %v", err)
		}
		want := map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64}[t.GOARCH]
		if f.Cpu != want || f.Type != macho.TypeExec {
			return "", fmt.Errorf("Mach-O %s %s, want %s executable", f.Cpu, f.Type, want)
		}
		return fmt.Sprintf("Mach-O %s %s", f.Cpu, f.Type), nil
	case "windows":
		f, err := pe.NewFile(r)
		if err != nil {
			return "", fmt.Errorf("not a PE file: %v", err)
		}
		want := map[string]uint16{"amd64": pe.IMAGE_FILE_MACHINE_AMD64, "arm64": pe.IMAGE_FILE_MACHINE_ARM64}[t.GOARCH]
		if f.Machine != want || f.Characteristics&pe.IMAGE_FILE_EXECUTABLE_IMAGE == 0 || f.Characteristics&pe.IMAGE_FILE_DLL != 0 {
			return "", fmt.Errorf("PE machine %#x characteristics %#x, want machine %#x executable image", f.Machine, f.Characteristics, want)
		}
		return fmt.Sprintf("PE machine %#x (%s)", f.Machine, map[uint16]string{pe.IMAGE_FILE_MACHINE_AMD64: "AMD64", pe.IMAGE_FILE_MACHINE_ARM64: "ARM64"}[f.Machine]), nil
	}
	return "", fmt.Errorf("unknown target OS %s", t.GOOS)
}
