//go:build unix && !linux

package beneath

import "os"

// openNoFollow is openComponents: macOS and the BSDs have no openat2.
func openNoFollow(root, rel string) (*os.File, error) { return openComponents(root, rel) }
