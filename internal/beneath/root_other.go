//go:build !linux

package beneath

import (
	"io/fs"
	"os"
)

// Root is a store root held open for a pass; only Linux opens files from
// it (openat2), elsewhere each open walks from the root.
type Root struct{}

// OpenRoot returns nil: there is nothing to hold open.
func OpenRoot(string) *Root { return nil }

// Close does nothing.
func (*Root) Close() {}

// openNoFollowIn is openNoFollow.
func openNoFollowIn(_ *Root, root, rel string) (*os.File, error) { return openNoFollow(root, rel) }

// openIn is Open's open: through an *os.File.
func openIn(d *Root, root, rel, path string) (File, fs.FileInfo, error) {
	return openOSFile(d, root, rel, path)
}
