// Package ignite is tierbench's Apache Ignite engine: a cluster of Ignite 2.16
// server nodes started for each run, each its own JVM on 127.0.0.1 (static
// discovery on loopback, no multicast), with native persistence's three
// folders on their tiers:
//
//   - persistence (storagePath): partition and index files, checkpoint
//     markers; each node also keeps its work directory (binary metadata,
//     marshaller mappings) and its log there.
//   - wal (walPath): the write-ahead log segments.
//   - wal_archive (walArchivePath): archived WAL segments.
//
// Ignite puts each node's files in a subfolder named after its consistent id
// (node0, node1, ...) under each folder, so the files of every node visibly
// land on their tier.
//
// When a study places wal_archive on the same tier as wal, walArchivePath is
// the wal folder itself: Ignite then turns archiving off and keeps writing
// new segments in the WAL folder, deleting old ones once checkpointed, as
// the source study (Ignite on Optane) ran with walPath = walArchivePath. The
// wal_archive folder tierbench made is then left empty. "Same tier" is
// judged by the folders' parents: the runner makes one run folder per tier
// with one subfolder per component.
//
// Nodes and clients talk TCP over loopback with the OS's socket buffer
// sizes rather than Ignite's fixed 32 KiB, which on loopback stalls
// connections for ~1 s at a time under load (see java/ignite Main.base).
//
// The workloads run in a thick client JVM (java/ignite: io.tierbench.ignite.Main
// client), which tierbench starts for the load and for each measured run:
// the DB serves engine.Cache (the workloads are workload/cachekv's), and
// driver/stream reads what the client reports. Engine sessions are not
// served.
//
// On a Kubernetes cluster (container.go) the same launcher runs each node
// in a pod of a StatefulSet, in Ignite's official image, with the same
// server command line but the pod's name and address; the client runs as
// the load generator's Job in the same image and loads and drives in one
// JVM.
package ignite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/server"
	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/host/tcpport"
	"github.com/tierbench/tierbench/setting"
	"github.com/tierbench/tierbench/tier/syncdelay"
)

// Components.
const (
	Persistence = "persistence"
	WAL         = "wal"
	WALArchive  = "wal_archive"
)

// CacheName is the one cache the workloads use (a folder cache-tierbench
// under each node's storage folder).
const CacheName = "tierbench"

// Timeouts.
const (
	// startTimeout bounds starting every node, joining them and activating
	// the cluster: 3 JVMs on 2 cores take 5-15 s.
	startTimeout = 90 * time.Second
	// stopGrace is how long a node may take to stop on SIGTERM (its
	// shutdown hook stops the node, which may write a checkpoint) before it
	// is killed.
	stopGrace = 60 * time.Second
)

// Option names.
const (
	optNodes          = "nodes"
	optRegionSize     = "region_size"
	optWALSegmentSize = "wal_segment_size"
	optWALArchiveSize = "wal_archive_size"
	optBackups        = "backups"
	optAtomicity      = "atomicity"
	optHeap           = "heap"
)

// Option limits.
const (
	maxNodes = 16
)

// Engine opens Ignite clusters.
type Engine struct{}

var _ engine.Engine = Engine{}

// Spec declares Ignite's components, durability modes and options.
func (Engine) Spec() engine.Spec {
	return engine.Spec{
		Name:      "ignite",
		Crashable: true,
		// A crash of part of the cluster leaves node0, which activated it.
		CrashNodes: func(o engine.Options) int { return o.Int(optNodes) },
		MaxClients: 512, MaxClientsWhy: "clients are threads of the one client JVM, each with its own HDR histograms in the client's heap, 512 MiB by default (option heap)",
		Image:  Image,
		Models: []engine.Model{engine.ModelCache},
		Doc:    "Apache Ignite 2.16 cluster (3 server JVMs on 127.0.0.1 by default) with native persistence, driven by a thick Java client; workloads puts, gets, putget",
		Components: []engine.Component{
			{Name: Persistence, Role: engine.RoleData, Doc: "storagePath: partition and index files (<node>/cache-tierbench/), checkpoint markers; also each node's work directory and log"},
			{Name: WAL, Role: engine.RoleCommitLog, Doc: "walPath: the write-ahead log segments (<node>/*.wal)"},
			{Name: WALArchive, Role: engine.RoleArchive, DefaultsTo: WAL, Doc: "walArchivePath: archived WAL segments; optional, on wal's tier when left out; placed on wal's tier it is wal's own folder, which turns archiving off (as the source study ran)"},
		},
		Modes: []engine.Mode{
			{Durability: engine.Sync, Doc: "walMode FSYNC: each update is in the WAL and fsynced before it is acknowledged (group commit across threads). Survives a process crash, an OS crash and power loss.", Survives: []string{engine.CrashProcess, engine.CrashPower}},
			{Durability: engine.Async, Doc: "walMode LOG_ONLY (Ignite's default): each update is written to the WAL (memory-mapped, so into the OS page cache) before it is acknowledged; fsync only at checkpoints and segment switches. Survives a process crash, not an OS crash or power loss.", Survives: []string{engine.CrashProcess}},
			{Durability: engine.Background, Doc: "walMode BACKGROUND: updates go to a WAL buffer that a background thread writes out every walFlushFrequency (2 s). Even a process crash may lose the last ~2 s of acknowledged updates; an OS crash or power loss may lose more."},
			{Durability: engine.NoWAL, Doc: "walMode NONE: no WAL; updates reach the persistence folder only at checkpoints (every 3 min or when dirty pages pile up). Any crash loses everything written since the last checkpoint and may leave the store unrecoverable."},
			{Durability: engine.Memory, Doc: "native persistence off: data lives only in the nodes' off-heap data regions; nothing is written to the tiers (the persistence folder holds only logs and work files). Every stop or crash loses everything."},
		},
		// Every node holds its heap and may fill its data region.
		MemoryNeed: func(o engine.Options) (int64, []string) {
			return int64(o.Int(optNodes)) * (o.Size(optHeap) + o.Size(optRegionSize)), []string{optNodes + " x (" + optHeap + " + " + optRegionSize + ")"}
		},
		Options: []setting.Setting{
			{Name: optNodes, Kind: setting.Int, Default: "3", Min: "1", Max: strconv.Itoa(maxNodes), Doc: "server nodes, one JVM each, all on 127.0.0.1 (on a cluster: one pod each)"},
			{Name: optRegionSize, Kind: setting.Size, Memory: true, Default: "1GiB", Min: "10MiB", Doc: "default data region maxSize per node: off-heap memory for pages (the whole data set in memory mode, so it must fit)"},
			{Name: optWALSegmentSize, Kind: setting.Size, Default: "64MiB", Min: "512KiB", Max: "2047MiB", Doc: "walSegmentSize (a Java int, so under 2GiB)"},
			{Name: optWALArchiveSize, Kind: setting.Size, Default: "512MiB", Min: "512KiB", Doc: "maxWalArchiveSize per node: WAL kept beyond what recovery needs (also bounds the WAL folder when archiving is off)"},
			{Name: optBackups, Kind: setting.Int, Default: "0", Min: "0", Max: "8", Doc: "backup copies of each partition"},
			{Name: optAtomicity, Kind: setting.Enum, Default: "atomic", Values: []string{"atomic", "transactional"}, Doc: "cache atomicityMode: atomic or transactional"},
			{Name: optHeap, Kind: setting.Size, Memory: true, Default: "512MiB", Min: "128MiB", Doc: "JVM heap (-Xms/-Xmx) of each node and of the client"},
		},
	}
}

// settings are a run's parsed options and durability.
type settings struct {
	nodes          int
	regionSize     int64
	walSegmentSize int64
	walArchiveSize int64
	backups        int
	atomicity      string // ATOMIC | TRANSACTIONAL
	heap           int64
	persistence    bool
	walMode        string
}

func parseSettings(cfg engine.Config) (settings, error) {
	s := settings{persistence: true}
	switch cfg.Durability {
	case engine.Sync:
		s.walMode = "FSYNC"
	case engine.Async:
		s.walMode = "LOG_ONLY"
	case engine.Background:
		s.walMode = "BACKGROUND"
	case engine.NoWAL:
		s.walMode = "NONE"
	case engine.Memory:
		s.persistence = false
	default:
		return s, fmt.Errorf("durability %q is not supported (use sync, async, background, nowal or memory)", cfg.Durability)
	}
	o := cfg.Options
	s.nodes = o.Int(optNodes)
	s.regionSize, s.walSegmentSize = o.Size(optRegionSize), o.Size(optWALSegmentSize)
	s.walArchiveSize, s.heap = o.Size(optWALArchiveSize), o.Size(optHeap)
	if s.walArchiveSize < s.walSegmentSize {
		return s, fmt.Errorf("option %s=%d must be at least %s (%d)", optWALArchiveSize, s.walArchiveSize, optWALSegmentSize, s.walSegmentSize)
	}
	s.backups = o.Int(optBackups)
	// The Spec's Values are atomic and transactional: Ignite's modes in
	// lower case.
	s.atomicity = strings.ToUpper(o.String(optAtomicity))
	return s, nil
}

// DB is a running Ignite cluster.
type DB struct {
	java      *launcher
	set       settings
	nodes     []*node
	discovery []string // 127.0.0.1:port of every server
	dirs      []string // persistence, wal and archive folders; nil in memory mode
	home      string   // logs and work directories
	track     func(pid int) func()
	memory    engine.MemoryGroup // every node starts in it (the study's memory)
	syncs     syncdelay.Rules    // every node starts under them (engine.Config.SyncDelays)
	version   string
	closers   server.Closers // what Open got, given back by Close

	mu      sync.Mutex
	closed  bool
	clients map[int]bool // pids of running client JVMs, killed by Close
	// loadWatch is told of client JVMs (WatchLoad); nil: nobody.
	loadWatch driver.LoadWatch
}

var (
	_ engine.DB      = (*DB)(nil)
	_ engine.Checker = (*DB)(nil)
)

// Open starts the cluster's nodes, waits until every one has started and
// the first has activated the cluster (which, with persistence, sets the
// baseline to all of them) and found the cache.
func (e Engine) Open(ctx context.Context, cfg engine.Config) (_ engine.DB, err error) {
	if cfg.Target != "" {
		return nil, errors.New("a target (a cluster tierbench did not start) is not supported")
	}
	set, err := parseSettings(cfg)
	if err != nil {
		return nil, err
	}
	var dirs []string
	if set.persistence {
		if dirs, err = server.RunDirs(cfg.Dirs, Persistence, WAL, WALArchive); err != nil {
			return nil, err
		}
		if filepath.Dir(dirs[2]) == filepath.Dir(dirs[1]) {
			dirs[2] = dirs[1] // same tier: archiving off, as the source study ran
		}
	}
	java, err := findLauncher()
	if err != nil {
		return nil, err
	}
	d := &DB{java: java, set: set, track: cfg.Track, memory: cfg.Memory, syncs: cfg.SyncDelays, version: java.version()}
	defer d.closers.CloseOnError(&err)
	if d.home, err = homeDir(cfg, &d.closers); err != nil {
		return nil, err
	}
	ports, err := tcpport.FreeN(2 * set.nodes)
	if err != nil {
		return nil, err
	}
	for i := range set.nodes {
		n := &node{id: "node" + strconv.Itoa(i), log: filepath.Join(d.home, "node"+strconv.Itoa(i)+".log"),
			discoPort: ports[2*i], commPort: ports[2*i+1]}
		d.nodes = append(d.nodes, n)
		d.discovery = append(d.discovery, loopback+":"+strconv.Itoa(n.discoPort))
	}
	// Nodes that fail to start exit soon; once open, a node may take its
	// time to stop (a checkpoint).
	grace := 10 * time.Second
	d.closers.Add("close ignite", func() error { return d.stopNodes(grace) })
	d.closers.Do(d.killClients)
	d.dirs = dirs
	if err := d.startNodes(); err != nil {
		return nil, err
	}
	if err := d.waitReady(ctx, nil); err != nil {
		return nil, err
	}
	grace = stopGrace
	return d, nil
}

// homeDir picks the folder for logs and work directories: the persistence
// folder, or with memory durability any component folder given, or a
// temporary folder of our own, which c removes.
func homeDir(cfg engine.Config, c *server.Closers) (string, error) {
	dir := cfg.Dirs[Persistence]
	if dir == "" {
		names := make([]string, 0, len(cfg.Dirs))
		for c := range cfg.Dirs {
			names = append(names, c)
		}
		sort.Strings(names)
		for _, c := range names {
			if cfg.Dirs[c] != "" {
				dir = cfg.Dirs[c]
				break
			}
		}
	}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "tierbench-ignite-")
		if err == nil {
			c.RemoveAll(tmp)
		}
		return tmp, err
	}
	return filepath.Abs(dir)
}

// Version is the Ignite version of the launcher's ignite-core jar.
func (d *DB) Version() string { return d.version }

// PID is the first node's process id (telemetry watches it).
func (d *DB) PID() int { return d.nodes[0].proc.PID() }

// PIDs are every node's process id.
func (d *DB) PIDs() []int {
	out := make([]int, len(d.nodes))
	for i, n := range d.nodes {
		out[i] = n.proc.PID()
	}
	return out
}

// Nodes is the number of server nodes.
func (d *DB) Nodes() int { return len(d.nodes) }

// Home is the folder with the nodes' logs and work directories.
func (d *DB) Home() string { return d.home }

// Check reports a node that has exited, with the tail of its log.
func (d *DB) Check() error {
	var errs []error
	for _, n := range d.nodes {
		if err := n.proc.Died(); err != nil {
			errs = append(errs, fmt.Errorf("ignite node %s died: %w", n.id, err))
		}
	}
	return errors.Join(errs...)
}

// NewSession fails: Ignite's workloads run in its own Java client.
func (d *DB) NewSession(context.Context) (engine.Session, error) {
	return nil, errors.New("engine ignite serves no tierbench sessions: its workloads (puts, gets, putget) run in its own Java client")
}

// Close kills any client JVM still running, stops every node (SIGTERM,
// killed after a grace) and leaves their folders to the caller. A node that
// had already exited is reported.
func (d *DB) Close() error {
	died := d.Check()
	err := d.closers.Close()
	if died != nil {
		return fmt.Errorf("close ignite: %w", died)
	}
	return err
}

// killClients refuses new client JVMs and kills those still running; each
// one's runClient reaps it.
func (d *DB) killClients() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	for pid := range d.clients {
		_ = proc.KillGroup(pid)
	}
}
