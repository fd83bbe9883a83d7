package sessionstore

import (
	"path/filepath"

	"github.com/dsh-lsp/dsh-lsp/sessionstore/storepath"
)

// SessionPath returns the transcript path of a session (spec §1.2): in
// its directory (storepath.Dir), the file of enc.
func SessionPath(root string, cwd *string, id string, enc Encoding) (string, error) {
	dir, err := storepath.Dir(root, cwd, id)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, enc.FileName()), nil
}
