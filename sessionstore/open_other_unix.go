//go:build unix && !linux

package sessionstore

import "os"

// openNoFollow opens root/rel without following a symlink below root:
// openat with O_NOFOLLOW per component (macOS and the BSDs have no
// openat2).
func openNoFollow(root, rel string) (*os.File, error) { return openComponents(root, rel) }
