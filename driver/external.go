package driver

import "context"

// External is a load generator other than Run: a standard tool (pgbench,
// sysbench) or an engine's own client (Ignite's Java client). It runs
// clients for cfg.Warmup and then cfg.Duration and returns the same figures
// Run does, histograms in nanoseconds, so its runs land in the same schema.
// It calls cfg.OnTick once per interval it learns of, when it can.
type External interface {
	Drive(ctx context.Context, cfg Config, clients int) (*Result, error)
}
