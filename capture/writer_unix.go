//go:build unix

package capture

import (
	"errors"
	"syscall"
)

// Open flags of NewPcapngWriter: the last path element must not be a
// symlink, and opening a FIFO must not wait for a reader.
const (
	oNoFollow = syscall.O_NOFOLLOW
	oNonblock = syscall.O_NONBLOCK
)

// isSymlinkErr tells whether an open failed because of O_NOFOLLOW.
func isSymlinkErr(err error) bool { return errors.Is(err, syscall.ELOOP) || errors.Is(err, errSymlink) }
