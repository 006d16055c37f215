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
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
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
