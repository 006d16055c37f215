//go:build !linux

package capture

const hugePage = 2 << 20

func adviseHuge([]byte) {}
