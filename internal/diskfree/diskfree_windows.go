//go:build windows

package diskfree

import (
	"fmt"

	"golang.org/x/sys/windows"
)

func free(dir string) (int64, error) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return 0, fmt.Errorf("free space of %s: %w", dir, err)
	}
	var avail, total, totalFree uint64
	if err := windows.GetDiskFreeSpaceEx(p, &avail, &total, &totalFree); err != nil {
		return 0, fmt.Errorf("free space of %s: %w", dir, err)
	}
	return int64(avail), nil
}
