package hugepage

import (
	"runtime/debug"
	"testing"
)

// BenchmarkFirstTouch writes one byte in each 4 KiB page of a new 64 MiB
// array, plain or from Make: the cost of backing its memory, which is
// what a restart pays for the arrays it fills (bench/README.md). The
// memory is given back to the system between rounds, so that every round
// touches memory the process does not hold.
func BenchmarkFirstTouch(b *testing.B) {
	const size = 64 << 20
	for _, bc := range []struct {
		name string
		make func(int) []byte
	}{
		{"plain", func(n int) []byte { return make([]byte, n) }},
		{"hugepage", Make[byte]},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				b.StopTimer()
				debug.FreeOSMemory()
				b.StartTimer()
				a := bc.make(size)
				for i := 0; i < len(a); i += 4096 {
					a[i] = 1
				}
			}
		})
	}
}
