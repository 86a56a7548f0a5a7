package postgres

import "testing"

// TestReplayed reads what a crash recovery replayed from the server's log,
// the last start's, as PostgreSQL 15 writes it.
func TestReplayed(t *testing.T) {
	for _, c := range []struct{ name, log, want string }{
		{"none", "LOG:  database system is ready to accept connections\n", ""},
		{"replayed", `LOG:  redo starts at 0/1000000
LOG:  redo done at 0/1000100 system usage: CPU: user: 0.00 s, system: 0.00 s, elapsed: 0.01 s
LOG:  database system was not properly shut down; automatic recovery in progress
LOG:  redo starts at 0/1500790
LOG:  redo done at 0/2154890 system usage: CPU: user: 0.14 s, system: 0.00 s, elapsed: 0.15 s
`, "replayed 12 MiB of WAL (0/1500790 to 0/2154890) in 0.15 s"},
		{"across a segment file's high word", "LOG:  redo starts at 0/FFFFFF00\nLOG:  redo done at 1/100 system usage: CPU: user: 0.00 s, elapsed: 0.01 s\n",
			"replayed 512 B of WAL (0/FFFFFF00 to 1/100) in 0.01 s"},
		{"nothing to replay", "LOG:  database system was not properly shut down; automatic recovery in progress\n", "recovery found no WAL to replay"},
		{"cut short", "LOG:  redo starts at 0/1500790\nPANIC:  could not read\n", "WAL replay started at 0/1500790; its end is not in the log"},
	} {
		if got := replayed(c.log); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
