//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// unprivilegedID is the user and group kwatch drops to when started as
// root: "nobody" on Linux.
const unprivilegedID = 65534

// dropPrivileges gives up what live capture no longer needs once its packet
// ring is open (the mapping survives the drop): as root it becomes nobody,
// which loses every capability; otherwise (CAP_NET_RAW through setcap) it
// clears its capabilities. Either way no exec can regain privileges.
func dropPrivileges(e *env) error {
	if err := noNewPrivs(); err != nil {
		return fmt.Errorf("live: dropping privileges: %w", err)
	}
	if os.Geteuid() != 0 {
		// A thread the runtime starts during the clearing, from one not yet
		// cleared, would keep the capability: clear again until none has.
		var err error
		for range 3 {
			if err = dropCapabilities(); err == nil {
				if err = checkThreads(); err == nil {
					e.log.Debug().Msg("live: cleared capabilities after opening the capture ring")
					return nil
				}
			}
		}
		return fmt.Errorf("live: dropping privileges: %w", err)
	}
	// Setuid and Setgid apply to every thread, through the runtime or libc.
	if err := syscall.Setgroups(nil); err != nil {
		return fmt.Errorf("live: dropping privileges: setgroups: %w", err)
	}
	if err := syscall.Setgid(unprivilegedID); err != nil {
		return fmt.Errorf("live: dropping privileges: setgid: %w", err)
	}
	if err := syscall.Setuid(unprivilegedID); err != nil {
		return fmt.Errorf("live: dropping privileges: setuid: %w", err)
	}
	e.log.Debug().Int("uid", unprivilegedID).Msg("live: dropped root after opening the capture ring")
	if err := checkThreads(); err != nil {
		return fmt.Errorf("live: dropping privileges: %w", err)
	}
	return nil
}

// noNewPrivs sets PR_SET_NO_NEW_PRIVS on every thread. The flag is per
// thread and a Go process runs on several: without cgo the runtime runs
// the prctl on all of them; a cgo-linked binary cannot (AllThreadsSyscall
// refuses), and there the flag was set before the first thread started,
// by the C constructor of nnp_cgo_linux.go, so that every thread inherited
// it. kwatch never execs, so the flag is defence in depth either way.
func noNewPrivs() error {
	_, _, errno := syscall.AllThreadsSyscall(syscall.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0)
	switch errno {
	case 0:
		return nil
	case syscall.ENOTSUP:
		// cgo: the constructor did it; set it here too in case it did not
		// run (the flag cannot be cleared, only set).
		return unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
	}
	return fmt.Errorf("no_new_privs: %w", errno)
}

// dropCapabilities empties the permitted, effective and inheritable sets
// of every thread (capset is per thread; see allThreadsCapClear).
func dropCapabilities() error { return allThreadsCapClear() }

// checkThreads reads back every thread's status: a thread that kept a
// capability or lacks no_new_privs ends the run rather than capture with
// privileges.
func checkThreads() error {
	tasks, err := filepath.Glob("/proc/self/task/*/status")
	if err != nil || len(tasks) == 0 {
		return nil // no /proc: nothing to check against
	}
	var bad []string
	for _, task := range tasks {
		b, err := os.ReadFile(task)
		if err != nil {
			continue // the thread ended
		}
		st := string(b)
		if !strings.Contains(st, "\nNoNewPrivs:\t1\n") {
			bad = append(bad, filepath.Base(filepath.Dir(task))+" without no_new_privs")
		}
		if !strings.Contains(st, "\nCapEff:\t0000000000000000\n") || !strings.Contains(st, "\nCapPrm:\t0000000000000000\n") {
			bad = append(bad, filepath.Base(filepath.Dir(task))+" with capabilities")
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("privileges still held by threads %s", strings.Join(bad, ", "))
	}
	return nil
}
