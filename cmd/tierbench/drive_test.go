package main

import (
	"bufio"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/driver/stream"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/enginetest"
	"github.com/tierbench/tierbench/workload/tpcb"
)

// drivePostgres starts a PostgreSQL server tierbench's engine manages
// (enginetest.OpenPostgres) and returns its target URL without the
// password, and the password.
func drivePostgres(t *testing.T) (target, password string) {
	t.Helper()
	ep := enginetest.OpenPostgres(t).(engine.Served).Endpoint()
	password = ep.Password
	ep.Password = ""
	return ep.URL(), password
}

// driveTPCB runs `tierbench drive` on tpcb against a real server and
// returns its standard output.
func driveTPCB(t *testing.T, target, password string) string {
	t.Helper()
	r := tierbenchEnv(t, "", []string{passwordEnv + "=" + password}, "drive", "--engine", "postgres", "--target", target,
		"--workload", "tpcb", "--set", "scale=1", "--load", "--clients", "2", "--warmup", "200ms", "--duration", "1s")
	if r.code != 0 {
		t.Fatalf("drive exit %d\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, password) {
		t.Error("the password is in drive's output")
	}
	return r.stdout
}

// TestDrive runs `tierbench drive` against a real PostgreSQL server it did
// not start, with the password in the environment, and reads its standard
// output with the stream reader the runner uses on a pod's log: the load,
// the intervals and the final histograms arrive, and the password is in
// neither output. A URL with a password is refused before anything runs.
// (TestKubernetesStudy reads the same output through a pod's log.)
func TestDrive(t *testing.T) {
	target, password := drivePostgres(t)
	r := tierbench(t, "drive", "--engine", "postgres", "--target", strings.Replace(target, "@", ":"+password+"@", 1),
		"--workload", "tpcb")
	if r.code != exitBadInput || !strings.Contains(r.stderr, passwordEnv) || r.stdout != "" || strings.Contains(r.stderr, password) {
		t.Errorf("a password in the URL: exit %d, stdout %q, stderr %q; want exit 2 naming %s", r.code, r.stdout, r.stderr, passwordEnv)
	}

	out := driveTPCB(t, target, password)
	ops := []string{tpcb.OpTPCB}
	rd := stream.NewReader("tierbench drive", driver.Config{Ops: ops})
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	var loaded int64 = -1
	for sc.Scan() {
		if n, ok := stream.LoadedRecords(sc.Bytes()); ok {
			loaded = n
		}
		rd.Line(sc.Bytes())
	}
	res, err := rd.Result(nil)
	if err != nil {
		t.Fatalf("reading drive's output: %v\n%s", err, out)
	}
	if loaded != 100000 {
		t.Errorf("loaded %d records, want scale 1's 100000 accounts", loaded)
	}
	if res.Measured.Ops == 0 || res.Measured.Errors != 0 || len(res.Intervals) == 0 {
		t.Errorf("measured %d ops, %d errors, %d intervals", res.Measured.Ops, res.Measured.Errors, len(res.Intervals))
	}
	if n := res.Measured.ByOp[0].Latency.TotalCount(); n != res.Measured.Ops {
		t.Errorf("the final histogram holds %d transactions, the run %d", n, res.Measured.Ops)
	}
}

// TestDriveBadInput: drive refuses what it cannot run before it connects
// to anything (exit 2, nothing on standard output), naming the flag.
func TestDriveBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--engine", "pebble", "--target", "x://y", "--workload", "ycsb-a"}, "--engine pebble"},
		{[]string{"--engine", "opensearch", "--target", "http://127.0.0.1:9", "--workload", "ingest", "--durability", "nosync"}, `--durability "nosync": engine opensearch has sync, async`},
		{[]string{"--engine", "opensearch", "--target", "http://127.0.0.1:9", "--workload", "ingest", "--option", "shards"}, `--option "shards": want name=value`},
		{[]string{"--engine", "opensearch", "--target", "http://127.0.0.1:9", "--workload", "ingest", "--option", "shard=2"}, `--option "shard=2": want name=value with name one of`},
		{[]string{"--engine", "opensearch", "--target", "http://127.0.0.1:9", "--workload", "ingest", "--option", "shards=0"}, "--option shards 0 is out of range: it must be from 1 to 1024"},
		{[]string{"--engine", "opensearch", "--target", "http://127.0.0.1:9", "--workload", "ingest", "--option", "refresh_interval=soon"}, `--option refresh_interval "soon" is not a duration`},
		{[]string{"--engine", "opensearch", "--target", "http://127.0.0.1:9", "--workload", "ingest", "--clients", "100000"}, "--clients 100000: at most 128"},
		{[]string{"--engine", "postgres", "--target", "postgres://u@127.0.0.1:9/db", "--workload", "tpcb", "--set", "scale=1", "--set", "scale=2"}, "--set scale is given twice"},
		{[]string{"--engine", "postgres", "--target", "postgres://u@127.0.0.1:9/db", "--workload", "tpcb", "--set", "scale=0"}, "--set: workload tpcb: scale 0 is out of range"},
		{[]string{"--engine", "postgres", "--target", "postgres://u@127.0.0.1:9/db?password=x", "--workload", "tpcb"}, "--target carries a password"},
		{[]string{"--engine", "redis", "--target", "redis://127.0.0.1:9", "--workload", "tpcb"}, "--workload tpcb needs the sql data model, which engine redis does not serve"},
		{[]string{"--engine", "postgres", "--target", "postgres://u@127.0.0.1:9/db", "--workload", "messaging", "--set", "services=2", "--clients", "4"}, "--clients 4: at most 2: a service's messages are taken in order"},
	} {
		r := tierbench(t, append([]string{"drive"}, tc.args...)...)
		if r.code != exitBadInput || !strings.Contains(r.stderr, tc.want) || r.stdout != "" {
			t.Errorf("drive %v: exit %d, stdout %q, stderr %q; want exit 2 naming %q", tc.args, r.code, r.stdout, r.stderr, tc.want)
		}
	}
}
