//go:build linux && cgo

package main

// A cgo-linked kwatch cannot reach every thread with a system call:
// syscall.AllThreadsSyscall refuses, since the runtime does not know the
// threads C code may start. no_new_privs and capabilities are per thread.
//
// no_new_privs: the constructor below runs before the Go runtime starts
// its first thread, so every thread inherits the flag.
//
// Capabilities (kwatch given CAP_NET_RAW by setcap): allThreadsCapClear
// signals every thread of the process with SIGSYS, whose handler (on the
// thread's signal stack, as Go requires: SA_ONSTACK) clears the thread's
// capabilities; the caller waits for every handler, then puts Go's handler
// back. SIGSYS because the runtime never blocks it (an idle main thread
// blocks the real-time signals), as libpsx does for its all-thread system
// calls in cgo programs.

/*
#include <dirent.h>
#include <errno.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

__attribute__((constructor)) static void kwatch_no_new_privs(void) {
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

static atomic_int kwatch_cap_done;
static atomic_int kwatch_cap_failed;

static int kwatch_capclear(void) {
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof d);
	return syscall(SYS_capset, &h, d);
}

static void kwatch_cap_handler(int sig) {
	int saved = errno;
	if (kwatch_capclear() != 0) atomic_fetch_add(&kwatch_cap_failed, 1);
	atomic_fetch_add(&kwatch_cap_done, 1);
	errno = saved;
}

// kwatch_all_threads_capclear returns 0, or an errno.
static int kwatch_all_threads_capclear(void) {
	int sig = SIGSYS;
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = kwatch_cap_handler;
	sa.sa_flags = SA_ONSTACK | SA_RESTART;
	sigfillset(&sa.sa_mask);
	if (sigaction(sig, &sa, &old) != 0) return errno;
	pid_t pid = getpid(), self = syscall(SYS_gettid);
	int err = 0;
	if (kwatch_capclear() != 0) err = errno;
	DIR *d = opendir("/proc/self/task");
	if (d == NULL) {
		err = errno;
	} else {
		int sent = 0;
		atomic_store(&kwatch_cap_done, 0);
		atomic_store(&kwatch_cap_failed, 0);
		struct dirent *e;
		while ((e = readdir(d)) != NULL) {
			pid_t tid = atoi(e->d_name);
			if (tid <= 0 || tid == self) continue;
			if (syscall(SYS_tgkill, pid, tid, sig) == 0) sent++;
		}
		closedir(d);
		// Wait (at most 1 s) for every signalled thread's handler.
		struct timespec ms = { 0, 1000000 };
		for (int i = 0; i < 1000 && atomic_load(&kwatch_cap_done) < sent; i++) nanosleep(&ms, NULL);
		if (atomic_load(&kwatch_cap_done) < sent) err = ETIMEDOUT;
		if (atomic_load(&kwatch_cap_failed) > 0) err = EPERM;
	}
	sigaction(sig, &old, NULL);
	return err;
}
*/
import "C"

import (
	"fmt"
	"syscall"
)

// allThreadsCapClear clears the capabilities of every thread (see above).
func allThreadsCapClear() error {
	if errno := C.kwatch_all_threads_capclear(); errno != 0 {
		return fmt.Errorf("capset on every thread: %w", syscall.Errno(errno))
	}
	return nil
}
