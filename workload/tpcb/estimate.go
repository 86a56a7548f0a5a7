package tpcb

// accountBytes is the payload of one pgbench_accounts row (aid, bid,
// abalance and the 84-byte filler), before any engine's row or page
// overhead; tellers and branches are too few to count.
const accountBytes = 4 + 4 + 4 + 84

// EstimatedBytes is a lower bound of the data set the load writes: scale x
// 100,000 accounts. Study validation refuses a tier that cannot hold it.
func (w *Workload) EstimatedBytes() int64 {
	return w.scale * accountsPerScale * accountBytes
}
