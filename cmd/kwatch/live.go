package main

import (
	"context"
	"errors"
)

func (e *env) live(ctx context.Context, args []string) error {
	return errors.New("live: not built yet")
}

func (e *env) tui(ctx context.Context, args []string) error {
	return errors.New("tui: not built yet")
}
