//go:build !linux

package sessionstore

import "os"

// rootDir is the store root held open for a pass; only Linux opens files
// from it (openat2), elsewhere each open walks from the root.
type rootDir struct{}

func openRootDir(string) *rootDir { return nil }

func (*rootDir) close() {}

// openNoFollowIn is openNoFollow.
func openNoFollowIn(_ *rootDir, root, rel string) (*os.File, error) { return openNoFollow(root, rel) }
