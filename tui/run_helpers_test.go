package tui

import (
	"context"
	"io"
	"testing"
)

func context_withCancel(t *testing.T) (context.Context, context.CancelFunc) {
	return context.WithCancel(t.Context())
}

func pipe(t *testing.T) (*io.PipeReader, *io.PipeWriter) {
	t.Helper()
	return io.Pipe()
}
