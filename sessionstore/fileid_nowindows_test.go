//go:build !windows

package sessionstore

func underWineForTest() bool { return false }
