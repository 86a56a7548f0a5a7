// Package crdb ports three of CockroachDB's built-in workloads (`cockroach
// workload`) to PostgreSQL and MariaDB SQL, so a placement can be judged
// by the same shapes the Ceph study ran on CockroachDB: `kv`, upserts and
// point reads of keys already written; `crdb-bank`, one contended UPDATE
// moving money between two accounts; and `movr`, a ride-sharing app's
// six tables over nine cities, mostly reads of a city's vehicles, with
// location updates, rides started and ended, users, vehicles and promo
// codes added. UPSERT becomes INSERT ... ON CONFLICT (PostgreSQL) or ON
// DUPLICATE KEY UPDATE (MariaDB), BYTES becomes BYTEA or LONGBLOB, and
// UUID and JSONB stay so on PostgreSQL and become CHAR(36) and JSON on
// MariaDB. Written from reading cockroach's pkg/workload/kv, bank and
// movr; no code is theirs.
//
// Deadlocks and serialization failures are retried, as cockroach's driver
// retries them (sqlwork.Retries), and counted; the count is part of what
// Verify records.
package crdb

import (
	"github.com/tierbench/tierbench/workload"
)

// seedParam is both workloads' seed.
var seedParam = workload.Param{Name: pSeed, Default: "", Doc: "random seed, empty = random; set for reproducible runs"}

// parseInt parses parameter name's value as an integer in [lo, hi]; the
// error names the parameter, its value and the range, with why.
func parseInt(name, value string, lo, hi int64, why string) (int64, error) {
	return workload.ParseInt(name, value, lo, hi, why)
}
