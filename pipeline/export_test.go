package pipeline

// WithBatchSteps makes sharded runs cut batches every n segments, so that
// small test captures cross batch boundaries.
func WithBatchSteps(o Options, n int) Options {
	o.batchSteps = n
	return o
}

// WithHeldBytes sets the cap on bytes held aside (reassembly.Options.
// MaxHeldBytes), so that small test captures reach it.
func WithHeldBytes(o Options, n int) Options {
	o.heldBytes = n
	return o
}
