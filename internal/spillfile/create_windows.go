//go:build windows

package spillfile

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// create creates a spill file in dir that Windows deletes when
// its last handle closes (FILE_FLAG_DELETE_ON_CLOSE): an open file cannot
// be unlinked there, and a server an editor kills would otherwise leave
// its states behind in the cache directory.
func create(dir string) (*os.File, error) {
	var b [8]byte
	rand.Read(b[:])
	name := filepath.Join(dir, "dsh-lsp-states-"+hex.EncodeToString(b[:]))
	p, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return nil, err
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ|windows.GENERIC_WRITE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil,
		windows.CREATE_NEW, windows.FILE_ATTRIBUTE_TEMPORARY|windows.FILE_FLAG_DELETE_ON_CLOSE, 0)
	if err != nil {
		return nil, &os.PathError{Op: "create", Path: name, Err: err}
	}
	return os.NewFile(uintptr(h), name), nil
}
