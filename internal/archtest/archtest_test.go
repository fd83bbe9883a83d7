package archtest

import (
	"os/exec"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/dsh-lsp/dsh-lsp"

// violations returns one line per broken layering rule in graph (package
// import path → its non-test imports):
//   - cmd/… imports nothing under lsp/ but lsp itself (the server entry
//     point); result shapes come from reference, features from completion
//     and diagnostics;
//   - the LSP wire and position packages (lsp/…, except the lsptest
//     harness) do not import reference: the core sits below the server, not
//     below the wire;
//   - only cmd/…, bench/… and stress/… import lsp (tests may too);
//   - the core (reference/…, sessionstore/…, internal/…) imports no front
//     end: nothing under lsp/, completion, diagnostics, mcpserver, cmd/…;
//   - sessionstore/transcript reads bytes it is handed: it imports neither
//     os nor the rest of sessionstore.
func violations(graph map[string][]string) []string {
	var out []string
	under := func(p, dir string) bool {
		return p == module+"/"+dir || strings.HasPrefix(p, module+"/"+dir+"/")
	}
	for pkg, imports := range graph {
		for _, imp := range imports {
			switch {
			case under(pkg, "cmd") && under(imp, "lsp") && imp != module+"/lsp":
				out = append(out, pkg+" imports "+imp+" (cmd may import only the lsp entry point)")
			case under(pkg, "lsp") && pkg != module+"/lsp" && pkg != module+"/lsp/lsptest" && under(imp, "reference"):
				out = append(out, pkg+" imports "+imp+" (the wire and position packages stay below the core)")
			case imp == module+"/lsp" && !under(pkg, "cmd") && !under(pkg, "bench") && !under(pkg, "stress"):
				out = append(out, pkg+" imports "+imp+" (only cmd, bench and stress import the server)")
			case (under(pkg, "reference") || under(pkg, "sessionstore") || under(pkg, "internal")) &&
				(under(imp, "lsp") || under(imp, "completion") || under(imp, "diagnostics") || under(imp, "mcpserver") || under(imp, "cmd")):
				out = append(out, pkg+" imports "+imp+" (the core imports no front end)")
			case pkg == module+"/sessionstore/transcript" && (imp == "os" || under(imp, "sessionstore")):
				out = append(out, pkg+" imports "+imp+" (the transcript reader is handed its bytes)")
			}
		}
	}
	sort.Strings(out)
	return out
}

func TestViolationsFindsEachRule(t *testing.T) {
	m := module + "/"
	tests := []struct {
		name  string
		graph map[string][]string
		want  int
	}{
		{"allowed", map[string][]string{
			m + "cmd/dsh-lsp":  {m + "lsp", m + "reference", m + "completion"},
			m + "lsp":          {m + "lsp/wire", m + "lsp/position", m + "reference"},
			m + "lsp/wire":     {m + "internal/jsjson"},
			m + "lsp/position": {m + "internal/jsjson"},
			m + "lsp/lsptest":  {m + "lsp/wire", m + "lsp/position"},
			m + "completion":   {m + "lsp/wire", m + "lsp/position", m + "reference"},
			m + "stress":       {m + "lsp"},
			m + "bench/run":    {m + "lsp"},
			m + "reference":    {m + "internal/jsjson"},
			m + "lsprelated/x": {m + "reference"},
			m + "cmd/dsh-lspx": {m + "lspx/protocol"},
		}, 0},
		{"cmd imports a wire package", map[string][]string{m + "cmd/dsh-lsp": {m + "lsp/wire"}}, 1},
		{"cmd imports the position package", map[string][]string{m + "cmd/dsh-lsp": {m + "lsp/position"}}, 1},
		{"wire imports the core", map[string][]string{m + "lsp/wire": {m + "reference"}}, 1},
		{"position imports the core", map[string][]string{m + "lsp/position": {m + "reference"}}, 1},
		{"a library imports the server", map[string][]string{m + "mcpserver": {m + "lsp"}}, 1},
		{"the core imports a feature package", map[string][]string{m + "reference": {m + "completion"}}, 1},
		{"the store imports the wire", map[string][]string{m + "sessionstore": {m + "lsp/wire"}}, 1},
		{"the transcript reader opens files", map[string][]string{m + "sessionstore/transcript": {"os"}}, 1},
		{"a feature package imports the server", map[string][]string{m + "completion": {m + "lsp"}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := violations(tt.graph); len(got) != tt.want {
				t.Fatalf("violations = %q, want %d", got, tt.want)
			}
		})
	}
}

func TestImportRules(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"/...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		graph[f[0]] = f[1:]
	}
	if _, ok := graph[module+"/lsp"]; !ok || len(graph) < 10 {
		t.Fatalf("go list listed %d packages, without %s/lsp: not the module's graph", len(graph), module)
	}
	for _, v := range violations(graph) {
		t.Error(v)
	}
}
