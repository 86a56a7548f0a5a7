package ceph

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/engine"
)

// Option names; the ones that size a cluster are exported for the rbd
// tiers (engine/ceph/rbdtier), which size theirs against an image.
const (
	OptOSDs      = "osds"
	OptReplicas  = "replicas"
	OptBlockSize = "block_size"
	OptDBSize    = "db_size"
	OptWALSize   = "wal_size"

	optOSDs         = OptOSDs
	optReplicas     = OptReplicas
	optBlockSize    = OptBlockSize
	optDBSize       = OptDBSize
	optWALSize      = OptWALSize
	optMemoryTarget = "memory_target"
	optMedia        = "media"
)

// Bounds of the options. maxOSDs keeps a cluster on this 2-core,
// 24 GiB machine: each OSD takes memory_target of RAM and two threads per
// shard.
//
// RocksDB, as BlueStore configures it (write_buffer_size 256 MiB),
// preallocates each WAL file at 1.1 times its write buffer, 282 MiB, and
// holds two while it rolls from one to the next: a block.wal smaller than
// 576 MiB holds none of them, and the WAL silently goes to block.db or the
// main device instead. block.db holds RocksDB's files (12 MiB on a fresh
// OSD), and the WAL's too when wal has no device of its own; what does
// not fit spills over to the main device (SlowUsedBytes).
// The sizes' least values are the Spec's Min: block_size 1GiB, db_size
// 64MiB, wal_size 576MiB, memory_target 512MiB.
const maxOSDs = 4

// Media are the values of option media: the class of device BlueStore
// tunes itself for.
const (
	mediaSSD = "ssd"
	mediaHDD = "hdd"
)

// mediaTuning is what BlueStore and the OSD would pick by themselves from
// the device's rotational flag, written out so the disk's own claim (this
// VM's virtio disk says rotational) changes nothing: Ceph 16.2's defaults
// for each class.
type mediaTuning struct {
	// preferDeferred: writes up to this size go through the RocksDB WAL
	// first (deferred) and reach the main device later.
	preferDeferred int64
	// shards and threads: the OSD's op queue shards and threads per shard.
	shards, threads int
}

var tunings = map[string]mediaTuning{
	mediaSSD: {preferDeferred: 0, shards: 8, threads: 2},
	mediaHDD: {preferDeferred: 65536, shards: 5, threads: 1},
}

// pgNum is the number of placement groups of the benchmark pool and of
// the pools radosgw makes (their default): enough for the op queue's
// shards to share the load, few enough for 4 OSDs with 8 gateway pools to
// stay under mon_max_pg_per_osd (250).
const pgNum = 16

// settings are one run's options, checked.
type settings struct {
	osds, replicas                     int
	blockSize, dbSize, walSize, memory int64
	media                              string
	tuning                             mediaTuning
}

// settingsOf reads a run's options and checks what ties them together:
// one error naming the option and what to write.
func settingsOf(o engine.Options) (settings, error) {
	s := settings{
		osds: o.Int(optOSDs), replicas: o.Int(optReplicas),
		blockSize: o.Size(optBlockSize), dbSize: o.Size(optDBSize), walSize: o.Size(optWALSize),
		memory: o.Size(optMemoryTarget), media: o.String(optMedia),
	}
	s.tuning = tunings[s.media]
	if s.replicas > s.osds {
		return settings{}, fmt.Errorf("option replicas=%d must be from 1 to osds (%d): each replica of an object lives on its own OSD; raise osds or lower replicas", s.replicas, s.osds)
	}
	return s, nil
}

// tierBytes is Spec.TierBytes: the OSDs' device files at full size on the
// tiers placement names, as Open makes them: block.db only on a tier
// other than block's, block.wal only on one other than db's (or block's,
// when db goes with it). Tiers are told apart by name.
func tierBytes(placement map[string]string, o engine.Options) map[string]int64 {
	s, err := settingsOf(o)
	if err != nil {
		return nil
	}
	osds := int64(s.osds)
	block := placement[Block]
	db, wal := placement[BlockDB], placement[BlockWAL]
	if db == "" {
		db = block
	}
	if wal == "" {
		wal = db
	}
	out := map[string]int64{block: osds * s.blockSize}
	below := block
	if db != block {
		out[db] += osds * s.dbSize
		below = db
	}
	if wal != below {
		out[wal] += osds * s.walSize
	}
	return out
}

// minSize is the pool's min_size for its size, Ceph's own rule (size -
// size/2): writes stop when fewer replicas are up.
func minSize(size int) int { return size - size/2 }

// confLine is one setting of ceph.conf.
type confLine struct{ key, value string }

// confSection is one [section] of ceph.conf.
type confSection struct {
	name  string
	lines []confLine
}

// renderConf writes sections in ceph.conf's syntax.
func renderConf(sections ...confSection) string {
	var b strings.Builder
	b.WriteString("# Written by tierbench for one run of a Ceph cluster on 127.0.0.1.\n")
	for _, s := range sections {
		fmt.Fprintf(&b, "\n[%s]\n", s.name)
		for _, l := range s.lines {
			fmt.Fprintf(&b, "%s = %s\n", l.key, l.value)
		}
	}
	return b.String()
}

// itoa is strconv's, for the many numbers in ceph.conf.
func itoa[T int | int64](n T) string { return strconv.FormatInt(int64(n), 10) }

// clusterLines are what every daemon and client of the run share: where
// the monitor is, loopback only, cephx everywhere.
func (c *cluster) clusterLines() []confLine {
	return []confLine{
		{"fsid", c.fsid},
		{"mon_host", c.monAddrs},
		{"ms_bind_ipv4", "true"},
		{"ms_bind_ipv6", "false"},
		{"auth_cluster_required", "cephx"},
		{"auth_service_required", "cephx"},
		{"auth_client_required", "cephx"},
	}
}

// daemonConf is the daemons' ceph.conf: every path in the run's private
// folder or on the components' tiers, logs one file per daemon, nothing in
// /var/lib/ceph, /var/log/ceph or /var/run/ceph.
func (c *cluster) daemonConf() string {
	s := c.settings
	global := append(c.clusterLines(),
		confLine{"public_addr", "127.0.0.1"},
		confLine{"public_network", "127.0.0.1/32"},
		confLine{"auth_allow_insecure_global_id_reclaim", "false"},
		confLine{"run_dir", c.path(runDir)},
		confLine{"admin_socket", c.path(runDir, "$cluster-$name.asok")},
		confLine{"crash_dir", c.path(crashDir)},
		confLine{"log_file", c.path(logDir, "$name.log")},
		confLine{"log_to_stderr", "false"},
		confLine{"err_to_stderr", "false"},
		confLine{"mon_cluster_log_to_file", "false"},
		confLine{"mgr_stats_period", "1"},
		confLine{"osd_pool_default_size", itoa(s.replicas)},
		confLine{"osd_pool_default_min_size", itoa(minSize(s.replicas))},
		confLine{"osd_pool_default_pg_num", itoa(pgNum)},
		confLine{"osd_pool_default_pgp_num", itoa(pgNum)},
		confLine{"osd_pool_default_pg_autoscale_mode", "off"},
		confLine{"mon_allow_pool_size_one", "true"},
		confLine{"mon_warn_on_pool_no_redundancy", "false"},
		confLine{"mon_warn_on_pool_no_app", "false"},
		// All OSDs are on one host: replicas go to different OSDs.
		confLine{"osd_crush_chooseleaf_type", "0"},
	)
	mon := []confLine{
		{"mon_data", c.path(monDir)},
		{"mgr_initial_modules", ""},
		{"mon_mgr_digest_period", "1"},
	}
	mgr := []confLine{
		{"mgr_data", c.path(mgrDir)},
		{"mgr_disabled_modules", strings.Join(c.mgrModules, " ")},
		{"mgr_tick_period", "1"},
	}
	osd := []confLine{
		{"osd_data", c.path("osd.$id")},
		{"osd_objectstore", "bluestore"},
		{"osd_memory_target", itoa(s.memory)},
		{"osd_mon_report_interval", "1"},
		{"bdev_aio_poll_ms", itoa(aioPollMS)},
		{"bluestore_debug_enforce_settings", s.media},
		{"bluestore_prefer_deferred_size", itoa(s.tuning.preferDeferred)},
		{"bluestore_prefer_deferred_size_hdd", itoa(s.tuning.preferDeferred)},
		{"bluestore_prefer_deferred_size_ssd", itoa(s.tuning.preferDeferred)},
		{"osd_op_num_shards", itoa(s.tuning.shards)},
		{"osd_op_num_threads_per_shard", itoa(s.tuning.threads)},
	}
	osd = append(osd, c.devices.confLines()...)
	rgw := []confLine{
		{"rgw_data", c.path(rgwDir)},
		{"keyring", c.path(rgwDir, "keyring")},
		// Level 1 logs two lines per request: I/O and CPU beside the
		// measured gateway. Errors are still logged.
		{"debug_rgw", "0/5"},
	}
	return renderConf(
		confSection{"global", global},
		confSection{"mon", mon},
		confSection{"mgr", mgr},
		confSection{"osd", osd},
		confSection{rgwName, rgw},
	)
}

// clientConf is the clients' ceph.conf (the ceph and rados tools,
// radosgw-admin): the monitor and the admin keyring, nothing else.
func (c *cluster) clientConf() string {
	return renderConf(confSection{"global", append(c.clusterLines(), confLine{"keyring", c.adminKeyring()})})
}

// DurabilityError is durability other than sync, which Ceph cannot honour.
func durabilityError(d engine.Durability) error {
	return fmt.Errorf("durability %q is not supported: Ceph acknowledges a write only once every replica has it on stable storage (the BlueStore WAL or the data device) and has no mode that acknowledges earlier; use durability: sync", d)
}
