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
	"github.com/tierbench/tierbench/setting"
)

// seedParam is the workloads' seed.
var seedParam = setting.Setting{Name: pSeed, Kind: setting.Int, Doc: "random seed; unset: random; set for reproducible runs"}
