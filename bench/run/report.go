package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// machine describes the host the numbers were taken on.
func machine() map[string]string {
	m := map[string]string{
		"cpus": fmt.Sprint(runtime.NumCPU()),
		"go":   runtime.Version(),
		"os":   runtime.GOOS + "/" + runtime.GOARCH,
	}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				m["cpu"] = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				m["memory"] = strings.TrimSpace(v)
			}
		}
	}
	if out, err := exec.Command("df", "-h", "--output=source,fstype,size", ".").Output(); err == nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		m["disk"] = strings.Join(strings.Fields(lines[len(lines)-1]), " ")
	}
	return m
}

func mb(n int64) string {
	if n < 0 {
		return "?"
	}
	return fmt.Sprintf("%.0f MB", float64(n)/(1<<20))
}

func median(rs []startResult, f func(startResult) float64) float64 {
	if len(rs) == 0 {
		return 0
	}
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	for i := range v {
		for j := i + 1; j < len(v); j++ {
			if v[j] < v[i] {
				v[i], v[j] = v[j], v[i]
			}
		}
	}
	return v[len(v)/2]
}

// printTable writes the results as Markdown tables.
func printTable(w io.Writer, res results) {
	fmt.Fprintf(w, "Machine: %s, %s CPUs, %s RAM, disk %s, %s; compression %s; %s\n\n",
		res.Machine["cpu"], res.Machine["cpus"], res.Machine["memory"], res.Machine["disk"], res.Machine["go"], res.Compression, res.Date)
	if len(res.Completion) > 0 {
		fmt.Fprintln(w, "| sessions | store on disk | first answer, no cache | complete, no cache | first answer, cache | complete, cache | first request latency (cache) | warm p50 / p99 (repeated queries) | warm p50 / p99 (new queries) | peak RSS |")
		fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
		for _, c := range res.Completion {
			if c.Error != "" {
				fmt.Fprintf(w, "| %d | %s | error: %s |||||||| \n", c.Sessions, mb(c.FileBytes), c.Error)
				continue
			}
			fmt.Fprintf(w, "| %d | %s | %.0f ms | %.0f ms | %.0f ms | %.0f ms | %.2f ms | %.2f / %.2f ms | %.2f / %.2f ms | %s |\n",
				c.Sessions, mb(c.FileBytes),
				median(c.NoCache, func(r startResult) float64 { return r.FirstAnswerMs }),
				median(c.NoCache, func(r startResult) float64 { return r.FirstCompleteMs }),
				median(c.Cache, func(r startResult) float64 { return r.FirstAnswerMs }),
				median(c.Cache, func(r startResult) float64 { return r.FirstCompleteMs }),
				median(c.Cache, func(r startResult) float64 { return r.FirstLatencyMs }),
				c.WarmP50Ms, c.WarmP99Ms, c.UniqueP50Ms, c.UniqueP99Ms, mb(c.PeakRSS))
		}
		fmt.Fprintln(w)
	}
	if len(res.Prepare) > 0 {
		fmt.Fprintln(w, "| source size | sources | plain bytes | cold prepare (no cache) | cold / floor | peak RSS cold | prepare, indexed (first / best) | floor (read+decode) | floor (read only) | peak RSS indexed |")
		fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
		for _, p := range res.Prepare {
			if p.Error != "" {
				fmt.Fprintf(w, "| %s | %d | %s | error: %s |||||| \n", p.Size, p.Sources, mb(p.PlainBytes), p.Error)
				continue
			}
			fmt.Fprintf(w, "| %s | %d | %s | %.0f ms | %.2f× | %s | %.0f / %.0f ms | %.0f ms | %.0f ms | %s |\n",
				p.Size, p.Sources, mb(p.PlainBytes), p.ColdMs, p.ColdMs/p.FloorMs, mb(p.ColdRSS), p.FirstMs, p.BestMs, p.FloorMs, p.FloorRead, mb(p.PeakRSS))
		}
	}
}
