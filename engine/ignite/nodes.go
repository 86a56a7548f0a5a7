package ignite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tierbench/tierbench/engine/server"
)

// node is one server JVM.
type node struct {
	id        string // consistent id: node0, node1, ...
	discoPort int
	commPort  int
	log       string
	// logFrom is the log's size when the node last started: its ready
	// line counts only beyond it (a restart appends to the same log).
	logFrom int64
	proc    *server.Process
	// crashed: killed by CrashNodes, not yet restarted.
	crashed bool
}

// startNodes starts every node's JVM; dirs are persistence, wal and the
// archive folder (nil in memory mode).
func (d *DB) startNodes() error {
	for i := range d.nodes {
		if err := d.startNode(i); err != nil {
			return err
		}
	}
	return nil
}

// startNode starts node i's JVM on the run's folders (d.dirs).
func (d *DB) startNode(i int) error {
	n := d.nodes[i]
	work := filepath.Join(d.home, "work", n.id)
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	args := serverArgs(d.set, nodeAddr{id: n.id, host: loopback, discoPort: n.discoPort, commPort: n.commPort},
		d.discovery, work, d.dirs)
	if i == 0 {
		args = append(args, "--activate-servers="+strconv.Itoa(len(d.nodes)))
	}
	n.logFrom = 0
	if fi, err := os.Stat(n.log); err == nil {
		n.logFrom = fi.Size()
	}
	proc, err := server.Start(server.Spec{Name: "ignite " + n.id, Path: d.java.java,
		Args: d.java.args(d.set.heap, args...), Dir: d.home, Log: n.log, Track: d.track, Memory: d.memory, SyncDelays: d.syncs})
	if err != nil {
		return err
	}
	n.proc = proc
	return nil
}

// loopback is where every node and client listens on this machine.
const loopback = "127.0.0.1"

// nodeAddr is where one server node listens and what it is called.
type nodeAddr struct {
	id, host            string
	discoPort, commPort int
}

// serverArgs is the launcher's server command for one node with the run's
// settings: here and in a pod on a cluster (where id and host are the
// pod's, as $(VAR) references). dirs are the persistence, wal and archive
// folders (unused in memory mode).
func serverArgs(set settings, n nodeAddr, discovery []string, work string, dirs []string) []string {
	args := []string{"server",
		"--consistent-id=" + n.id,
		"--local-host=" + n.host,
		"--disco-port=" + strconv.Itoa(n.discoPort),
		"--comm-port=" + strconv.Itoa(n.commPort),
		"--discovery=" + strings.Join(discovery, ","),
		"--work-dir=" + work,
		"--persistence=" + strconv.FormatBool(set.persistence),
		"--region-size=" + strconv.FormatInt(set.regionSize, 10),
		"--backups=" + strconv.Itoa(set.backups),
		"--atomicity=" + set.atomicity,
	}
	if set.persistence {
		args = append(args,
			"--storage-path="+dirs[0],
			"--wal-path="+dirs[1],
			"--wal-archive-path="+dirs[2],
			"--wal-mode="+set.walMode,
			"--wal-segment-size="+strconv.FormatInt(set.walSegmentSize, 10),
			"--wal-archive-size="+strconv.FormatInt(set.walArchiveSize, 10),
		)
	}
	return args
}

// readyLine is what a node prints once it has started (the first node:
// once it has also activated the cluster).
func readyLine(id string) string { return "TIERBENCH READY " + id }

// waitReady waits for the ready line of every node that want names (nil:
// every node), printed since it last started. A node that exits fails the
// wait at once with its log's tail.
func (d *DB) waitReady(ctx context.Context, want func(*node) bool) error {
	deadline := time.Now().Add(startTimeout)
	ready := make([]bool, len(d.nodes))
	for {
		all := true
		for i, n := range d.nodes {
			if ready[i] || want != nil && !want(n) {
				continue
			}
			if err := n.proc.Died(); err != nil {
				return fmt.Errorf("node %s did not start: %w", n.id, err)
			}
			if b, err := os.ReadFile(n.log); err == nil && int64(len(b)) >= n.logFrom &&
				strings.Contains(string(b[n.logFrom:]), readyLine(n.id)) {
				ready[i] = true
				continue
			}
			all = false
		}
		if all {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			for i, n := range d.nodes {
				if !ready[i] && (want == nil || want(n)) {
					why := "within " + startTimeout.String()
					if ctx.Err() != nil {
						why = "(" + ctx.Err().Error() + ")"
					}
					return n.proc.WithLog(fmt.Errorf("node %s did not start %s", n.id, why))
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stopNodes stops every node at once (SIGTERM, SIGKILL after grace).
func (d *DB) stopNodes(grace time.Duration) error {
	var wg sync.WaitGroup
	errs := make([]error, len(d.nodes))
	for i, n := range d.nodes {
		if n.proc == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = n.proc.Stop(grace, syscall.SIGTERM)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
