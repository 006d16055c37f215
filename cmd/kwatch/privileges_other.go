//go:build !linux

package main

// dropPrivileges has nothing to do where live capture is not supported.
func dropPrivileges(*env) error { return nil }
