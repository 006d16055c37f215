//go:build unix

package main

import (
	"context"
	"io"
	"os"
	"syscall"
	"time"
)

// interruptible makes a read of standard input from a pipe or socket end
// when ctx is done (SIGINT, SIGTERM): a blocking read of an idle pipe
// would otherwise hold `tcpdump ... | kwatch read -` past Ctrl-C. Go's
// poller can interrupt a read only on a non-blocking descriptor, so the
// pipe is switched to non-blocking; files and terminals are left alone
// (their reads do not wait for a writer).
func interruptible(ctx context.Context, r io.Reader) io.Reader {
	f, ok := r.(*os.File)
	if !ok {
		return r
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return r
	}
	if err := syscall.SetNonblock(int(f.Fd()), true); err != nil {
		return r
	}
	nb := os.NewFile(f.Fd(), f.Name())
	go func() {
		<-ctx.Done()
		_ = nb.SetReadDeadline(time.Now())
	}()
	return nb
}
