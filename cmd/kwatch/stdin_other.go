//go:build !unix

package main

import (
	"context"
	"io"
)

// interruptible returns r: elsewhere a read of standard input is not
// interrupted by a signal.
func interruptible(_ context.Context, r io.Reader) io.Reader { return r }
