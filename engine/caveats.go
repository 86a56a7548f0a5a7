package engine

import "context"

// Caveater is an optional DB ability: after the measured window, it names
// what happened in the run that changes what was measured without failing
// it ("RocksDB spilled over from block.db to the slow device"). The runner
// stores the caveats on the run, and show and the report print them beside
// its figures, so a number is never read without them.
type Caveater interface {
	Caveats(ctx context.Context) []string
}
