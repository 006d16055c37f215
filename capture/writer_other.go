//go:build !unix

package capture

import "errors"

// No O_NOFOLLOW or O_NONBLOCK here: -w is written by kwatch live, which
// runs on Linux only.
const (
	oNoFollow = 0
	oNonblock = 0
)

func isSymlinkErr(err error) bool { return errors.Is(err, errSymlink) }
