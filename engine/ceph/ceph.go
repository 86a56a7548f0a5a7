// Package ceph is tierbench's Ceph engine: a real Ceph cluster (Debian's
// 16.2 packages) started for each run on 127.0.0.1, with each OSD's
// BlueStore devices placed on tiers, serving the objects data model
// (engine.Objects): a RADOS pool for tools such as `rados bench`, and an
// S3 gateway (radosgw) started on first use.
//
// One run's cluster is one monitor, one manager and `osds` OSDs, all on
// this host, each daemon in the foreground through server.Start (own
// process group, parent-death signal, tracked for cleanup, its own log),
// run as Debian's OS user ceph. Start (about 8 s here): the monitor map
// (monmaptool) and store (ceph-mon --mkfs) from a keyring of keys made for
// the run, ceph-mon, ceph-mgr, then per OSD `ceph osd new` with its new
// key in a 0600 file, ceph-osd --mkfs and ceph-osd; then the pool
// tierbench (pgNum placement groups, size = replicas, autoscaling off) and
// a wait until every placement group is active+clean. Close stops the
// gateway, the OSDs, the manager and the monitor (SIGTERM, killed after a
// grace) and removes the private folder.
//
// Components, BlueStore's three devices, each a file per OSD:
//
//   - block: the main device, osd.N.block, where object data lives.
//   - db: block.db, osd.N.db, RocksDB (BlueStore's metadata: onodes,
//     allocations, omap). Left out, it goes with block.
//   - wal: block.wal, osd.N.wal, RocksDB's write-ahead log, which small
//     (deferred) writes also go through. Left out, it goes with db.
//
// A device is a file of its own only on a filesystem of its own: db on
// block's filesystem means no block.db (RocksDB lives inside the main
// device, the baseline), wal on db's (or on block's when db is inline)
// means no block.wal. Device files are made at their full size (sparse)
// and must fit their tier's free space. When block.db is too small,
// RocksDB spills over to the main device: SlowUsedBytes tells.
//
// What is not measured: the monitor's store, the manager's and the OSDs'
// data folders (keyring, fsid, symlinks to the devices), the admin sockets
// and the logs live in the run's private folder under the study's scratch
// folder. They are cluster metadata, small, and written rarely.
//
// The manager loads none of its Python modules (mgr_disabled_modules):
// they take 15 s of CPU to load here, and what a run asks of the manager,
// placement group statistics, is its C++ part. `ceph status` therefore
// reports HEALTH_ERR for the always-on modules it misses; I/O is not
// affected.
//
// Results do not depend on what the disk claims to be: this VM's disk
// says it is rotational, so BlueStore would tune itself for a hard disk.
// Option media pins the class (bluestore_debug_enforce_settings), and with
// it the settings that change results, written out in ceph.conf:
// bluestore_prefer_deferred_size (which writes go through the WAL first)
// and the OSD's op queue shards and threads.
//
// Who can reach it: every daemon binds to 127.0.0.1 only; cephx is
// required everywhere, with keys made for each run from the system's
// random source, which reach daemons and tools only in 0600 files (the
// admin keyring and client configuration are root's); the S3 user's keys
// are made by radosgw-admin and read from its answer. No key is on a
// command line or in a log.
package ceph

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/server"
	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/setting"
)

// Components: BlueStore's devices, named as BlueStore names them
// (block, block.db, block.wal).
const (
	Block    = "block"
	BlockDB  = "db"
	BlockWAL = "wal"
)

// Pool is the replicated pool made for the run's objects.
const Pool = "tierbench"

// Engine opens Ceph clusters.
type Engine struct{}

var _ engine.Engine = Engine{}

// Spec declares Ceph's components, its one durability mode and options.
func (Engine) Spec() engine.Spec {
	return engine.Spec{
		Name:       "ceph",
		MaxClients: 512, MaxClientsWhy: "the S3 gateway serves requests on 512 threads (rgw_thread_pool_size): more clients queue inside it, and " + engine.DriverClientsWhy,
		Models: []engine.Model{engine.ModelObjects},
		Doc:    "a Ceph 16.2 cluster per run on 127.0.0.1 (one monitor, one manager, osds OSDs on BlueStore files; cephx keys per run), serving a RADOS pool and an S3 gateway (radosgw, started on first use)",
		Components: []engine.Component{
			{Name: Block, Role: engine.RoleData, Doc: "BlueStore's main device, a file osd.N.block per OSD: the objects' data"},
			{Name: BlockDB, Role: engine.RoleMetadata, DefaultsTo: Block, Doc: "block.db, a file osd.N.db: RocksDB, BlueStore's metadata; on block's filesystem there is none and RocksDB lives in the main device"},
			{Name: BlockWAL, Role: engine.RoleCommitLog, DefaultsTo: BlockDB, Doc: "block.wal, a file osd.N.wal: RocksDB's write-ahead log, which small writes go through first; on db's filesystem (block's when db is inline) there is none and the WAL goes with the DB"},
		},
		Modes: []engine.Mode{
			{Durability: engine.Sync, Doc: "Ceph's only mode: a write is acknowledged once every replica has it on stable storage (BlueStore's WAL or data device, fsynced or written O_DIRECT). Survives power loss; nothing else is offered, since Ceph has no mode that acknowledges earlier.", Survives: []string{engine.CrashProcess, engine.CrashPower}},
		},
		TierBytes: tierBytes,
		// Every OSD sizes its caches to memory_target; the monitor,
		// manager and gateway come on top.
		MemoryNeed: func(o engine.Options) (int64, []string) {
			s, err := settingsOf(o)
			if err != nil {
				return 0, nil
			}
			return int64(s.osds) * s.memory, []string{optOSDs + " x " + optMemoryTarget}
		},
		Options: []setting.Setting{
			{Name: optOSDs, Kind: setting.Int, Default: "1", Min: "1", Max: strconv.Itoa(maxOSDs), Doc: "OSDs, each with its own devices on the components' tiers"},
			{Name: optReplicas, Kind: setting.Int, Default: "1", Min: "1", Max: strconv.Itoa(maxOSDs), Doc: "the pool's size: copies of each object, each on its own OSD (so at most osds)"},
			{Name: optBlockSize, Kind: setting.Size, Default: "2GiB", Min: "1GiB", Doc: "size of each OSD's main device file, BlueStore's main device"},
			{Name: optDBSize, Kind: setting.Size, Default: "1GiB", Min: "64MiB", Doc: "size of each OSD's block.db file, when db has a tier of its own: RocksDB, and its WAL files (282 MiB each) when wal goes with db; what does not fit spills over to the main device"},
			{Name: optWALSize, Kind: setting.Size, Default: "1GiB", Min: "576MiB", Doc: "size of each OSD's block.wal file, when wal has a tier of its own (RocksDB preallocates each WAL file at 282 MiB and holds two while it rolls over)"},
			{Name: optMemoryTarget, Kind: setting.Size, Memory: true, Default: "1GiB", Min: "512MiB", Doc: "osd_memory_target: memory each OSD sizes its caches to"},
			{Name: optMedia, Kind: setting.Enum, Values: []string{mediaSSD, mediaHDD}, Default: mediaSSD, Doc: "the device class BlueStore and the OSD tune for, whatever the disk reports: ssd (writes go straight to the main device; 8 op shards x 2 threads) or hdd (writes up to 64KiB go through the WAL first; 5 x 1)"},
		},
	}
}

// Open starts a cluster whose OSDs keep their devices in cfg.Dirs.
func (Engine) Open(ctx context.Context, cfg engine.Config) (_ engine.DB, err error) {
	if cfg.Target != "" {
		return nil, errors.New("a target (a cluster tierbench did not start) is not supported: tierbench starts the cluster to place its devices")
	}
	if cfg.Durability != engine.Sync {
		return nil, durabilityError(cfg.Durability)
	}
	s, err := settingsOf(cfg.Options)
	if err != nil {
		return nil, err
	}
	dirs, err := server.RunDirs(cfg.Dirs, Block, BlockDB, BlockWAL)
	if err != nil {
		return nil, err
	}
	bins, err := findBinaries()
	if err != nil {
		return nil, err
	}
	runAs, err := proc.RunAs("Ceph's daemons", "ceph-common", cephUser)
	if err != nil {
		return nil, err
	}
	if err := server.OwnFolders(ctx, "Ceph", runAs, dirs...); err != nil {
		return nil, err
	}
	devs, err := planDevices(dirs[0], dirs[1], dirs[2], s)
	if err != nil {
		return nil, err
	}
	if err := devs.checkSpace(s.osds); err != nil {
		return nil, err
	}
	d := &DB{track: cfg.Track, osds: make([]*server.Process, s.osds)}
	defer d.closers.CloseOnError(&err)
	scratch, err := server.Scratch(cfg.Scratch, "tierbench-ceph-", &d.closers)
	if err != nil {
		return nil, err
	}
	private, err := server.PrivateFolder(ctx, "Ceph", scratch, "ceph", runAs)
	if err != nil {
		return nil, err
	}
	d.closers.RemoveAll(private)
	if d.cluster, err = newCluster(private, runAs, s, devs, bins); err == nil {
		d.cluster.memory, d.cluster.syncs = cfg.Memory, cfg.SyncDelays
	}
	if err != nil {
		return nil, err
	}
	if err := d.start(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

// start makes and starts the daemons in order, each handed to d.closers
// as it starts, and waits until the pool is active+clean.
func (d *DB) start(ctx context.Context) error {
	c := d.cluster
	if err := c.writeFiles(); err != nil {
		return err
	}
	if err := c.makeMon(ctx); err != nil {
		return err
	}
	var err error
	if d.mon, err = c.daemon("ceph-mon", "mon."+monID, d.track, "--id", monID); err != nil {
		return err
	}
	d.closers.Add("stop the monitor", func() error { return stopAll(d.mon) })
	if err := d.mon.WaitReady(ctx, stepTimeout, server.Handshake(c.monV2, nil)); err != nil {
		return err
	}
	if d.mgr, err = c.daemon("ceph-mgr", "mgr."+mgrID, d.track, "--id", mgrID); err != nil {
		return err
	}
	d.closers.Add("stop the manager", func() error { return stopAll(d.mgr) })
	d.closers.Add("stop the OSDs", func() error { return stopAll(d.osds...) })
	errs := make([]error, len(d.osds))
	var wg sync.WaitGroup
	for id := range d.osds {
		wg.Go(func() {
			if errs[id] = c.makeOSD(ctx, id); errs[id] == nil {
				d.osds[id], errs[id] = c.daemon("ceph-osd", fmt.Sprintf("osd.%d", id), d.track, "--id", itoa(id))
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return d.whyFailed(err)
	}
	if err := c.createPool(ctx); err != nil {
		return d.whyFailed(err)
	}
	if err := c.waitClean(ctx, d.Check); err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, c.bins.path("ceph-osd"), "--version").Output()
	if err != nil {
		return fmt.Errorf("ceph-osd --version: %w", err)
	}
	d.version = strings.TrimSpace(string(out))
	return nil
}

// whyFailed adds to a failed step the death of a daemon, which is its
// likely cause.
func (d *DB) whyFailed(err error) error {
	if died := d.Check(); died != nil {
		return fmt.Errorf("%w; %w", err, died)
	}
	return err
}

// DB is a running cluster.
type DB struct {
	cluster *cluster
	closers server.Closers // what Open got, given back by Close
	track   func(int) func()
	mon     *server.Process
	mgr     *server.Process
	osds    []*server.Process // by OSD id
	gateway gateway
	version string

	closeOnce sync.Once
	closeErr  error
}

var (
	_ engine.DB           = (*DB)(nil)
	_ engine.Checker      = (*DB)(nil)
	_ engine.PIDer        = (*DB)(nil)
	_ engine.ProcessGroup = (*DB)(nil)
	_ engine.Objects      = (*DB)(nil)
)

// Version is Ceph's: "ceph version 16.2.15 (...) pacific (stable)".
func (d *DB) Version() string { return d.version }

// PID is osd.0's process: the daemon that does a run's I/O, which
// telemetry watches.
func (d *DB) PID() int { return d.osds[0].PID() }

// EnginePIDs are every daemon's: monitor, manager, OSDs and, once
// started, the gateway (engine.ProcessGroup).
func (d *DB) EnginePIDs() []int {
	var pids []int
	for _, p := range append([]*server.Process{d.mon, d.mgr, d.gateway.proc.Load()}, d.osds...) {
		if pid := p.PID(); pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Check reports the first daemon that has exited, named, with its log's
// tail.
func (d *DB) Check() error {
	procs := append([]*server.Process{d.mon, d.mgr, d.gateway.proc.Load()}, d.osds...)
	for _, p := range procs {
		if err := p.Died(); err != nil {
			return err
		}
	}
	return nil
}

// Rados is how a tool reaches the cluster as client.admin.
func (d *DB) Rados() engine.RadosCluster {
	c := d.cluster
	return engine.RadosCluster{Conf: c.path(clientConfFile), ID: adminID, Keyring: c.adminKeyring(), Pool: Pool, Replicas: c.settings.replicas}
}

// NewSession returns a session that reaches the objects through the DB:
// clients make their own connections (S3 or RADOS).
func (d *DB) NewSession(context.Context) (engine.Session, error) { return session{d}, nil }

// Close stops the gateway, then the cluster, and removes the private
// folder; the device files stay in the components' folders for the
// caller. A daemon that had already died is reported, with its log.
// Later calls return the first's result.
func (d *DB) Close() error {
	d.closeOnce.Do(func() {
		died := d.Check()
		d.closeErr = errors.Join(d.stopGateway(), d.closers.Close())
		if died != nil {
			d.closeErr = errors.Join(fmt.Errorf("close ceph: a daemon had already stopped: %w", died), d.closeErr)
		}
	})
	return d.closeErr
}

// session is one client's handle: the DB's objects.
type session struct{ d *DB }

var _ engine.Objects = session{}

func (s session) S3(ctx context.Context) (engine.S3Endpoint, error) { return s.d.S3(ctx) }
func (s session) Rados() engine.RadosCluster                        { return s.d.Rados() }
func (session) Close() error                                        { return nil }
