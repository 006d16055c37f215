package pipeline

// WithBatchSteps makes sharded runs cut batches every n segments, so that
// small test captures cross batch boundaries.
func WithBatchSteps(o Options, n int) Options {
	o.batchSteps = n
	return o
}
