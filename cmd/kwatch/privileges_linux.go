//go:build linux

package main

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// unprivilegedID is the user and group kwatch drops to when started as
// root: "nobody" on Linux.
const unprivilegedID = 65534

// dropPrivileges gives up what live capture no longer needs once its packet
// socket is open: as root it becomes nobody (and so loses every
// capability); otherwise (CAP_NET_RAW through setcap) it keeps what it has,
// which is only that capability. Either way no exec can regain privileges.
func dropPrivileges(e *env) error {
	if err := noNewPrivs(e); err != nil {
		return fmt.Errorf("live: dropping privileges: %w", err)
	}
	if os.Geteuid() != 0 {
		return nil
	}
	if err := syscall.Setgroups(nil); err != nil {
		return fmt.Errorf("live: dropping privileges: setgroups: %w", err)
	}
	if err := syscall.Setgid(unprivilegedID); err != nil {
		return fmt.Errorf("live: dropping privileges: setgid: %w", err)
	}
	if err := syscall.Setuid(unprivilegedID); err != nil {
		return fmt.Errorf("live: dropping privileges: setuid: %w", err)
	}
	e.log.Debug().Int("uid", unprivilegedID).Msg("live: dropped root after opening the capture socket")
	return nil
}

// noNewPrivs sets PR_SET_NO_NEW_PRIVS. The flag is per thread and a Go
// process runs on several, so it goes to every thread of the runtime; a
// cgo-linked binary cannot do that (AllThreadsSyscall refuses), and then
// only the calling thread and the threads it starts later get it. kwatch
// never execs, so the flag is defence in depth either way. (Setuid and
// Setgid below already apply to every thread, through the runtime or libc.)
func noNewPrivs(e *env) error {
	_, _, errno := syscall.AllThreadsSyscall(syscall.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0)
	if errno == 0 {
		return nil
	}
	if errno != syscall.ENOTSUP {
		return fmt.Errorf("no_new_privs: %w", errno)
	}
	e.log.Debug().Msg("live: cgo-linked binary: no_new_privs set on the calling thread only")
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	return nil
}
