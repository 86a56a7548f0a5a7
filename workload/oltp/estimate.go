package oltp

// rowBytes is the payload of one sbtest row (id, k, c CHAR(120), pad
// CHAR(60)), before any engine's row, index or page overhead.
const rowBytes = 4 + 4 + 120 + 60

// EstimatedBytes is a lower bound of the data set the load writes: tables x
// table_size rows. Study validation refuses a tier that cannot hold it.
func (w *Workload) EstimatedBytes() int64 {
	return w.opt.tables * w.opt.tableSize * rowBytes
}
