package hugepage

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// eligible reports whether the kernel may back the mapping holding p with
// huge pages (smaps "THPeligible"), and whether smaps says so at all.
func eligible(t *testing.T, p unsafe.Pointer) (eligible, known bool) {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 {
			in = lo <= uintptr(p) && uintptr(p) < hi
			continue
		}
		if v, ok := strings.CutPrefix(line, "THPeligible:"); ok && in {
			return strings.TrimSpace(v) == "1", true
		}
	}
	return false, false
}

// thpMode returns the bracketed mode of transparent huge pages.
func thpMode(t *testing.T) string {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		t.Skip("no transparent huge pages:", err)
	}
	s := string(b)
	return s[strings.Index(s, "[")+1 : strings.Index(s, "]")]
}

// TestLargeArraysAreAdvised: in "madvise" mode only an advised mapping is
// eligible for huge pages; Make advises a large array, not a small one.
func TestLargeArraysAreAdvised(t *testing.T) {
	if mode := thpMode(t); mode != "madvise" {
		t.Skipf("transparent huge pages %q: eligibility does not follow the advice", mode)
	}
	large := Make[uint64](3 * hugePageBytes / 8)
	if ok, known := eligible(t, unsafe.Pointer(&large[len(large)/2])); !known {
		t.Skip("smaps has no THPeligible")
	} else if !ok {
		t.Error("a 6 MiB array is not eligible for huge pages")
	}
	small := Make[byte](hugePageBytes / 2)
	if ok, _ := eligible(t, unsafe.Pointer(&small[len(small)/2])); ok {
		t.Error("an array of 1 MiB, which holds no whole huge page, was advised")
	}
	for i := range large {
		if large[i] != 0 {
			t.Fatalf("word %d is %d, want the zero value", i, large[i])
		}
	}
}
