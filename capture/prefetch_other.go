//go:build !amd64

package capture

func prefetch(*byte) {}
