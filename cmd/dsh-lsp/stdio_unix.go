//go:build unix

package main

import (
	"os"
	"syscall"
)

// newStdio opens stdin in non-blocking mode: Go then reads it through the
// runtime poller, where Close interrupts a blocked Read (a blocking fd's
// read(2) would wait for the client forever).
func newStdio() stdio {
	if err := syscall.SetNonblock(int(os.Stdin.Fd()), true); err == nil {
		return stdio{in: os.NewFile(os.Stdin.Fd(), "/dev/stdin")}
	}
	return stdio{in: os.Stdin}
}
