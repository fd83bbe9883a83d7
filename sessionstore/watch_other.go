//go:build !linux

package sessionstore

import (
	"errors"
	"syscall"
)

// watchable reports whether notifications on dir are trusted; only Linux
// tells network file systems apart here, elsewhere they are trusted (the
// periodic safety scan still catches what they miss).
func watchable(string) bool { return true }

// watchExhausted reports whether err means no more watches can be added
// (kqueue holds a descriptor per watched file).
func watchExhausted(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}
