//go:build !unix

package main

import "os"

// newStdio uses stdin as it is: Windows pipes cannot be put in
// non-blocking mode, so the process relies on exiting after "exit" rather
// than on Close interrupting a blocked read.
func newStdio() stdio { return stdio{in: os.Stdin} }
