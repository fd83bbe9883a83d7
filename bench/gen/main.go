// Command gen writes a realistic dsh session store in the real on-disk
// format, for benchmarks:
//
//	go run ./bench/gen -out bench/out/s10k -sessions 10000 -cwds 40 \
//	    -messages 8 -compression zstd -multibyte 0.2 -compactions 1 -seed 1
//
// -size sets the target plaintext bytes per session (e.g. 20MB for one
// large source). It prints a JSON summary on stdout and, with -manifest,
// writes one JSON object per session (id, cwd, createdAt, path, sizes,
// latest title) to that file. The output directory must not be inside a
// real store.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
)

func main() {
	var (
		out         = flag.String("out", "", "store root to write (required)")
		sessions    = flag.Int("sessions", 100, "number of sessions")
		cwds        = flag.Int("cwds", 10, "number of distinct working directories")
		messages    = flag.Int("messages", 0, "user prompts (turns) per session; 0 = from -size, else 8")
		size        = flag.String("size", "0", "target plaintext bytes per session (suffixes KB, MB, GB = powers of 1024); 0 = natural")
		compression = flag.String("compression", "zstd", "none or zstd")
		multibyte   = flag.Float64("multibyte", 0.2, "share of non-ASCII words (0..1)")
		compactions = flag.Int("compactions", 0, "manual compactions per session")
		nocwd       = flag.Float64("nocwd", 0.05, "share of sessions without a cwd")
		seed        = flag.Int64("seed", 1, "random seed")
		manifest    = flag.String("manifest", "", "write per-session JSON lines to this file")
		quiet       = flag.Bool("q", false, "no progress on stderr")
	)
	flag.Parse()
	if *out == "" {
		fail("-out is required")
	}
	bytes, err := workload.ParseSize(*size)
	if err != nil {
		fail(err.Error())
	}
	opts := workload.Options{
		Sessions: *sessions, CWDs: *cwds, Turns: *messages, Size: bytes,
		Compression: workload.Compression(*compression), Multibyte: *multibyte,
		Compactions: *compactions, NoCWD: *nocwd, Seed: *seed,
	}
	start := time.Now()
	last := time.Now()
	infos, err := workload.Generate(*out, opts, func(done int) {
		if !*quiet && time.Since(last) > 2*time.Second {
			last = time.Now()
			fmt.Fprintf(os.Stderr, "gen: %d/%d sessions\n", done, *sessions)
		}
	})
	if err != nil {
		fail(err.Error())
	}
	var plain, file int64
	for _, in := range infos {
		plain += in.Plain
		file += in.File
	}
	if *manifest != "" {
		if err := writeManifest(*manifest, infos); err != nil {
			fail(err.Error())
		}
	}
	json.NewEncoder(os.Stdout).Encode(map[string]any{
		"root": *out, "sessions": len(infos), "compression": opts.Compression,
		"plainBytes": plain, "fileBytes": file, "seconds": time.Since(start).Seconds(),
	})
}

func writeManifest(path string, infos []workload.Info) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, in := range infos {
		if err := enc.Encode(in); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "gen:", msg)
	os.Exit(2)
}
