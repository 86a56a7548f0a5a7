package bank

// accountBytes is the payload of one account row (INT id, BIGINT balance),
// before any engine's row or page overhead.
const accountBytes = 4 + 8

// EstimatedBytes is a lower bound of the data set the load writes: one row
// per account. Study validation refuses a tier that cannot hold it.
func (w *Workload) EstimatedBytes() int64 {
	return w.accounts * accountBytes
}
