package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/catalog"
)

// studyFor writes a minimal study of engine with one extra block (options,
// a workload's parameters) in dir: every component on one folder tier, the
// engine's first durability mode and a workload it can run with
// tierbench's own driver (or workload, a flow mapping, when given).
func studyFor(t *testing.T, dir, eng, workload, clients, extra string) string {
	t.Helper()
	cat := catalog.Default()
	spec, ok := cat.EngineSpec(eng)
	if !ok {
		t.Fatalf("no engine %s", eng)
	}
	if workload == "" {
		for _, name := range cat.WorkloadNames() {
			w, _ := cat.Workload(name)
			if w.Driver == "" && (w.Model == "" || spec.Serves(w.Model)) {
				workload = "{name: " + name + "}"
				break
			}
		}
	}
	var comps []string
	for _, c := range spec.Components {
		comps = append(comps, c.Name+": disk")
	}
	text := fmt.Sprintf(`name: limits
engine: %s
tiers:
  disk: {path: %q}
placements:
  all-disk: {%s}
baseline: all-disk
durability: [%s]
workload: %s
clients: %s
duration: 1s
%s
`, eng, filepath.Join(dir, "disk"), strings.Join(comps, ", "), spec.Modes[0].Durability, workload, clients, extra)
	return writeStudy(t, dir, text)
}

// TestSettingsOutOfRangeRefused: every limit an engine option or a
// workload parameter declares is checked when the study is read, so
// validate and run refuse a value outside it with exit 2 and one line
// naming the fix, before anything is created (issue 27, finding 7).
func TestSettingsOutOfRangeRefused(t *testing.T) {
	for _, c := range []struct {
		engine, workload, clients, extra, want string
	}{
		{"opensearch", "", "[1]", "options: {heap: 1MiB}", "option heap 1MiB is out of range: it must be at least 256MiB"},
		{"opensearch", "", "[1]", "options: {shards: 0}", "option shards 0 is out of range: it must be from 1 to 1024"},
		{"opensearch", "", "[1]", "options: {shards: -1}", "option shards -1 is out of range"},
		{"opensearch", "", "[1]", "options: {shards: 100000}", "option shards 100000 is out of range"},
		{"opensearch", "", "[1]", "options: {replicas: -1}", "option replicas -1 is out of range: it must be from 0 to 8"},
		{"opensearch", "", "[1]", "options: {refresh_interval: soon}", `option refresh_interval "soon" is not a duration; write e.g. refresh_interval: 1s`},
		{"postgres", "", "[1]", "options: {checkpoint_timeout: 10}", "option checkpoint_timeout 10 is out of range: it must be from 30 to 86400 seconds"},
		{"postgres", "", "[1]", "options: {max_wal_size: 1MiB}", "option max_wal_size 1MiB is out of range: it must be at least 32MiB"},
		{"ignite", "", "[1]", "options: {nodes: 0}", "option nodes 0 is out of range: it must be from 1 to 16"},
		{"ignite", "", "[1]", "options: {nodes: 100}", "option nodes 100 is out of range"},
		{"ignite", "", "[1]", "options: {wal_segment_size: 4GiB}", "option wal_segment_size 4GiB is out of range: it must be from 512KiB to 2047MiB"},
		{"ignite", "", "[1]", "options: {backups: -1}", "option backups -1 is out of range: it must be from 0 to 8"},
		{"postgres", "{name: messaging, services: 2}", "[4]", "", "clients 4 is more than workload messaging takes (at most 2)"},
		{"postgres", "", "[1]", "options: {memory: 32MiB}", "option memory 32MiB is out of range: it must be at least 64MiB"},
		{"postgres", "", "[1]", "options: {memory: 1PiB}", "option memory 1PiB is more than this machine's memory"},
		{"postgres", "", "[1]", "options: {memory: [1GiB, 100MiB], cache: 256MiB}", "option memory 100 MiB is below what engine postgres's own settings hold in memory: 256 MiB (cache)"},
		{"ignite", "", "[1]", "options: {memory: 1GiB}", "option memory 1.0 GiB is below what engine ignite's own settings hold in memory: 4.5 GiB (nodes x (heap + region_size))"},
		// The JVM beside its heap: a node held to little more than its
		// heap stalls there, or in a pod is OOM-killed (exit 137).
		{"opensearch", "", "[1]", "options: {memory: 1280MiB}", "option memory 1.3 GiB is below what engine opensearch's own settings hold in memory: 1.8 GiB (heap + direct memory (heap/2) + 256 MiB of the JVM's own"},
		{"pebble", "", "[1]", "options: {memory: 1GiB}", "option memory bounds a server's processes, and engine pebble runs inside tierbench's own process"},
	} {
		t.Run(c.engine+" "+c.extra+c.workload, func(t *testing.T) {
			dir := t.TempDir()
			refused(t, dir, studyFor(t, dir, c.engine, c.workload, c.clients, c.extra), nil, c.want)
		})
	}
}

// TestNotAStudyFileRefused: a path that names no study file (a device that
// never ends, a binary file, a folder) and an empty --resume are refused
// at once with exit 2, reading at most a bounded prefix and writing
// nothing.
func TestNotAStudyFileRefused(t *testing.T) {
	dir := t.TempDir()
	binary := filepath.Join(dir, "binary.yaml")
	if err := os.WriteFile(binary, []byte("name: x\x00\x01\nengine: pebble\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"validate", "/dev/zero"}, "study file /dev/zero: it is a device, not a study file"},
		{[]string{"run", "/dev/zero"}, "study file /dev/zero: it is a device, not a study file"},
		{[]string{"validate", binary}, "study file is not text (it holds a NUL byte or invalid UTF-8)"},
		{[]string{"validate", dir}, "it is a folder"},
		{[]string{"run", "--resume", ""}, "--resume needs the id of the study to take up"},
	} {
		results := filepath.Join(dir, "results")
		args := c.args
		if args[0] == "run" {
			args = append(args, "--results", results)
		}
		r := tierbenchEnv(t, dir, []string{"TIERBENCH_STATE_DIR=" + filepath.Join(dir, "state")}, args...)
		if r.code != exitBadInput || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 naming %q", c.args, r.code, r.stderr, c.want)
		}
		for _, p := range []string{results, filepath.Join(dir, "state")} {
			if _, err := os.Stat(p); !os.IsNotExist(err) {
				t.Errorf("%v created %s", c.args, p)
			}
		}
	}
}

// TestEngineFilesLargerThanTheirTierRefused: ceph's device files are made
// at full size, so a tmpfs tier smaller than the block.db placed on it is
// refused when the study is read, as an rbd tier's cluster would be.
func TestEngineFilesLargerThanTheirTierRefused(t *testing.T) {
	dir := t.TempDir()
	study := writeStudy(t, dir, fmt.Sprintf(`name: ceph-sizes
engine: ceph
tiers:
  disk: {path: %q}
  fast: {tmpfs: {size: 512MiB}}
placements:
  all-disk: {block: disk, db: disk, wal: disk}
  db-fast: {block: disk, db: fast, wal: fast}
baseline: all-disk
durability: [sync]
workload: {name: object-70-30}
clients: [1]
duration: 1s
options: {db_size: [128MiB, 1GiB]}
`, filepath.Join(dir, "disk")))
	refused(t, dir, study, nil, `tier "fast" (tmpfs, 512 MiB) cannot hold the 1.0 GiB of files engine ceph makes on it under placement "db-fast"`)
}
