//go:build !windows

package spillfile

import "os"

// create creates a spill file in dir and unlinks it at once: it
// lives as long as the process holds it open, whatever ends the process.
func create(dir string) (*os.File, error) {
	f, err := os.CreateTemp(dir, "dsh-lsp-states-*")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name())
	return f, nil
}
