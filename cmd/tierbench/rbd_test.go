package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/catalog"
	"github.com/tierbench/tierbench/engine/ceph/rbdtier"
	"github.com/tierbench/tierbench/engine/enginetest"
	"github.com/tierbench/tierbench/testenv"
)

// rbdStudy runs pebble on an rbd tier whose Ceph cluster lives on a tmpfs
// tier; %s is the measured window.
const rbdStudy = `name: rbd-kill
engine: pebble
tiers:
  blk:  {tmpfs: {size: 1100MiB}}
  ceph: {rbd: {size: 256MiB, fs: ext4, cluster: {block: blk}, options: {block_size: 1GiB}}}
placements:
  on-ceph: {data: ceph, wal: ceph}
baseline: on-ceph
durability: [sync]
workload: {name: ycsb-a, records: 500}
clients: [2]
warmup: 100ms
duration: %s
probe: off
`

// TestRbdTierKill9 kills tierbench with -9 while a run is measured on an
// rbd tier: its Ceph daemons and rbd-fuse die with it, and one `cleanup`
// leaves no mount (the tier's, rbd-fuse's), loop device, process or
// folder of the study behind.
func TestRbdTierKill9(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs root for mounts, loop devices and Ceph's daemons")
	}
	if err := rbdtier.Preflight(catalog.Default().Ceph(), rbdtier.Spec{FS: "ext4"}); err != nil {
		testenv.Skip(t, err)
	}
	state := os.Getenv("TIERBENCH_STATE_DIR")
	work := t.TempDir()
	resultsDir := filepath.Join(work, "results")
	st := writeStudy(t, work, fmt.Sprintf(rbdStudy, "60s"))
	cmd := exec.Command(binary, "run", st, "--results", resultsDir)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for !strings.Contains(errb.String(), "measured") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Kill()
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stuck := false
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		// A thread of tierbench was in fdatasync on the rbd tier when the
		// kill came: its write waits, uninterruptibly, for an OSD that
		// died with tierbench's other threads, so tierbench cannot finish
		// dying and rbd-fuse gets no parent-death signal. What frees it
		// is cleanup, which kills rbd-fuse and so fails that write.
		stuck = true
		t.Log("the killed tierbench is stuck in the kernel on a write to the rbd tier; cleanup must free it")
	}
	if m := mountsUnder(t, state); len(m) < 3 {
		t.Fatalf("the killed run left mounts %v: the test did not kill it mid-run\n%s", m, errb.String())
	}
	// The parent-death signal has the daemons and rbd-fuse gone at once,
	// once tierbench is gone.
	var left []string
	for end := time.Now().Add(5 * time.Second); !stuck && time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if left = enginetest.ProcessesNaming(state); len(left) == 0 {
			break
		}
	}
	if len(left) != 0 {
		t.Errorf("processes outlived the killed tierbench: %v", left)
	}

	r := tierbench(t, "cleanup")
	select {
	case <-exited:
	case <-time.After(time.Minute):
		t.Fatal("the killed tierbench is still stuck after cleanup")
	}
	if r.code != 0 || !strings.Contains(r.stdout, "undone") {
		t.Errorf("cleanup: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if m := mountsUnder(t, state); len(m) != 0 {
		t.Errorf("mounts left after cleanup: %v", m)
	}
	for _, sub := range []string{"mnt", "scratch"} {
		if ents, _ := os.ReadDir(filepath.Join(state, sub)); len(ents) != 0 {
			t.Errorf("left in %s after cleanup: %v", sub, ents)
		}
	}
	if l := loopsBackedBy(t, state); len(l) != 0 {
		t.Errorf("loop devices left after cleanup: %v", l)
	}
	if p := enginetest.ProcessesNaming(state); len(p) != 0 {
		t.Errorf("processes left after cleanup: %v", p)
	}
	if r = tierbench(t, "cleanup"); r.code != 0 || !strings.Contains(r.stdout, "nothing to clean up") {
		t.Errorf("second cleanup: exit %d\n%s", r.code, r.stdout)
	}
}

// TestRbdTierRefused refuses, before anything is created, an rbd tier
// whose cluster engine/ceph would refuse or whose programs are missing,
// naming the packages.
func TestRbdTierRefused(t *testing.T) {
	bins := func(programs ...string) string {
		dir := t.TempDir()
		for _, p := range programs {
			path, err := exec.LookPath(p)
			if err != nil {
				testenv.Skipf(t, "%s is not installed", p)
			}
			if err := os.Symlink(path, filepath.Join(dir, p)); err != nil {
				t.Fatal(err)
			}
		}
		return "PATH=" + dir
	}
	tools := []string{"mkfs.ext4", "losetup"}
	for _, c := range []struct {
		name, options string
		env           []string
		want          string
	}{
		{"replicas beyond osds", "{block_size: 1GiB, replicas: 2}", nil, `tier "ceph": its Ceph cluster: option replicas=2 must be from 1 to osds (1)`},
		{"rbd missing", "{block_size: 1GiB}", []string{bins(tools...)}, "rbd is not installed: run `make setup` or apt-get install ceph-common"},
		{"rbd-fuse missing", "{block_size: 1GiB}", []string{bins(append(tools, "rbd")...)}, "rbd-fuse is not installed: run `make setup` or apt-get install rbd-fuse"},
		{"ceph missing", "{block_size: 1GiB}", []string{bins(append(tools, "rbd", "rbd-fuse")...)}, "its Ceph cluster: Ceph is not installed (ceph-mon, ceph-mgr, ceph-osd, radosgw, monmaptool, ceph, radosgw-admin missing): apt-get install ceph-mon ceph-mgr ceph-osd radosgw ceph-common, or run `make setup`"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if os.Geteuid() != 0 {
				testenv.Skip(t, "an rbd tier needs root, which is checked first")
			}
			dir := t.TempDir()
			text := strings.Replace(fmt.Sprintf(rbdStudy, "1s"), "options: {block_size: 1GiB}", "options: "+c.options, 1)
			refused(t, dir, writeStudy(t, dir, text), c.env, c.want)
		})
	}
}
