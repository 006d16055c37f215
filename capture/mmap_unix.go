//go:build unix

package capture

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// mapFile maps a regular file read-only. ok is false when it cannot be
// mapped (not a regular file, empty, too large, or mmap failed): the caller
// reads it instead.
func mapFile(f *os.File) (data []byte, unmap func() error, ok bool) {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() <= 0 || int64(int(fi.Size())) != fi.Size() {
		return nil, nil, false
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, false
	}
	_ = unix.Madvise(data, unix.MADV_SEQUENTIAL) // a hint only
	return data, func() error { return syscall.Munmap(data) }, true
}

// pageSize aligns released ranges; mappings start on a page boundary.
var pageSize = os.Getpagesize()

// dropPages releases mapped pages already read: they leave the process's
// resident set (the page cache keeps them), and would be read back from
// the file if touched again.
func dropPages(b []byte) {
	if len(b) > 0 {
		_ = unix.Madvise(b, unix.MADV_DONTNEED) // best effort
	}
}
