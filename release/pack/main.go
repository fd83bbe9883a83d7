// Command pack builds and checks the release artifacts of dsh-lsp (run by
// release/build.sh):
//
//	pack archive -version V -bin DIR -out DIR -license FILE -readme FILE
//	    one archive per target from DIR/<goos>-<goarch>/dsh-lsp[.exe]:
//	    dsh-lsp_<V>_<goos>_<goarch>.tar.gz (zip for Windows), holding
//	    dsh-lsp_<V>_<goos>_<goarch>/{dsh-lsp[.exe],LICENSE,README.md}.
//	pack sums -dir DIR
//	    writes DIR/SHA256SUMS over every other file in DIR.
//	pack verify -version V -dir DIR
//	    checks that DIR holds the six archives, SHA256SUMS matching them,
//	    and the six platform .vsix files, and that every binary inside is
//	    an executable for its target: ELF e_machine x86-64/AArch64,
//	    Mach-O cputype x86_64/arm64, PE machine AMD64/ARM64 (read with
//	    debug/elf, debug/macho and debug/pe), and that each .vsix manifest
//	    names its target platform.
//
// Archives are written deterministically (sorted entries, fixed times and
// modes) so the same binaries give the same checksums.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: pack archive|sums|verify [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "archive":
		err = archiveMain(os.Args[2:])
	case "sums":
		err = sumsMain(os.Args[2:])
	case "verify":
		err = verifyMain(os.Args[2:], os.Stdout)
	default:
		err = fmt.Errorf("unknown subcommand %q (want archive, sums or verify)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pack:", err)
		os.Exit(1)
	}
}
