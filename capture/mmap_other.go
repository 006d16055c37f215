//go:build !unix

package capture

import "os"

// mapFile never maps where mmap is not available: files are read.
func mapFile(*os.File) ([]byte, func() error, bool) { return nil, nil, false }

const pageSize = 4096

func dropPages([]byte) {}
