package workload

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"
)

// FloorMode selects how much work the floor does per line.
type FloorMode string

// Floor modes.
const (
	// FloorRead only reads (and decompresses) the bytes and splits lines.
	FloorRead FloorMode = "read"
	// FloorValid also checks every line with json.Valid.
	FloorValid FloorMode = "valid"
	// FloorDecode json.Unmarshals every line into an `any` — the "plain
	// decode" prepare is compared against.
	FloorDecode FloorMode = "decode"
)

// FloorResult is the cost of one plain pass over transcripts.
type FloorResult struct {
	Mode       FloorMode     `json:"mode"`
	Files      int           `json:"files"`
	Lines      int64         `json:"lines"`
	PlainBytes int64         `json:"plainBytes"`
	FileBytes  int64         `json:"fileBytes"`
	Elapsed    time.Duration `json:"elapsedNs"`
}

// Floor reads each transcript with a plain line loop (zstd files streamed
// through one decoder, frames concatenated) and does mode's work per line.
func Floor(paths []string, mode FloorMode) (FloorResult, error) {
	res := FloorResult{Mode: mode, Files: len(paths)}
	start := time.Now()
	var dec *zstd.Decoder
	defer func() {
		if dec != nil {
			dec.Close()
		}
	}()
	// One line buffer for all files: a floor that allocated (and zeroed)
	// a fresh 1 MiB buffer per transcript would spend a third of its time
	// on that at 5,000 files of ~70 KB, flattering whatever is measured
	// against it.
	br := bufio.NewReaderSize(nil, 1<<20)
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return res, err
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return res, err
		}
		res.FileBytes += st.Size()
		var r io.Reader = f
		if strings.HasSuffix(p, ".zstd") {
			if dec == nil {
				dec, err = zstd.NewReader(f, zstd.WithDecoderConcurrency(1))
			} else {
				err = dec.Reset(f)
			}
			if err != nil {
				f.Close()
				return res, err
			}
			r = dec
		}
		br.Reset(r)
		err = floorLines(br, mode, &res)
		f.Close()
		if err != nil {
			return res, fmt.Errorf("%s: %w", p, err)
		}
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

func floorLines(br *bufio.Reader, mode FloorMode, res *FloorResult) error {
	var long []byte
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, line...)
			continue
		}
		if long != nil {
			line = append(long, line...)
			long = nil
		}
		if len(line) > 0 {
			res.PlainBytes += int64(len(line))
			res.Lines++
			switch mode {
			case FloorValid:
				if !json.Valid(line) {
					return fmt.Errorf("line %d is not JSON", res.Lines)
				}
			case FloorDecode:
				var v any
				if err := json.Unmarshal(line, &v); err != nil {
					return fmt.Errorf("line %d: %w", res.Lines, err)
				}
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
