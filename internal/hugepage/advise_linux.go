package hugepage

import "golang.org/x/sys/unix"

// advise asks for huge pages for b, which starts and ends on huge page
// boundaries. A kernel without transparent huge pages refuses (EINVAL);
// the memory is then backed as before, which is all the advice changes.
func advise(b []byte) { _ = unix.Madvise(b, unix.MADV_HUGEPAGE) }
