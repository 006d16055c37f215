package capture

import "syscall"

// hugePage is the size of a transparent huge page on x86-64 and arm64.
const hugePage = 2 << 20

// adviseHuge asks the kernel to back b with transparent huge pages where it
// can (THP in "madvise" mode, the common default). A page touched first
// costs a fault each, which on a virtual machine measured 13-17 us per 4 KiB
// page: 4 MiB of readahead chunks took longer to fault in than kwatch takes
// to analyze a small capture. One huge page is one fault. b stays Go
// memory: only the advice changes. Errors are ignored (advice only).
func adviseHuge(b []byte) {
	_ = syscall.Madvise(b, 14) // MADV_HUGEPAGE
}
