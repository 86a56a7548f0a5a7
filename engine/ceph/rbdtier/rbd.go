// Package rbdtier serves tierbench's rbd tiers: a block image in a Ceph
// cluster that tierbench starts for the study on other tiers, formatted
// and mounted so that any engine's component can be placed on Ceph.
//
//	tiers:
//	  ssd:  {loop: {backing: disk, size: 8GiB, fs: xfs}}
//	  pmem: {loop: {backing: ram, size: 4GiB, fs: ext4}}
//	  ceph-ref1: {rbd: {size: 4GiB, fs: ext4, cluster: {block: ssd, db: pmem, wal: pmem}, options: {db_size: 1GiB}}}
//
// cluster places the cluster's components (engine/ceph's block, db, wal;
// db goes with block and wal with db unless named) on the study's other
// tiers, never on an rbd tier; options are engine/ceph's. The cluster's
// engine reaches this package as a Ceph, which engine/ceph's Engine
// satisfies and package catalog hands in (Catalog.Ceph). It lives here,
// beside the engine that serves it, not under tier: the tiers are below
// the engines, and no package under tier imports one. Tier.Serve makes
// each rbd tier once per study, after the tiers it names, every step
// recorded in the ledger: a folder per component on those tiers, the
// cluster (engine/ceph's Open, durability sync, its daemons tracked), an
// image of size in its pool (`rbd create`), then, since this kernel has no
// rbd, nbd or ublk module, rbd-fuse in the foreground (own process group,
// parent-death signal, tracked) exposing the image as a file in a FUSE
// mount in the state folder, which the workspace attaches to a loop
// device, formats (ext4 or xfs) and mounts at the tier's mount point.
// Where the kernel's rbd driver is loaded (/sys/bus/rbd), the image is
// mapped with `rbd map` and /dev/rbdN formatted instead; that path is
// untested here. The workspace undoes it all in reverse on Close, on a
// failure half-way and on Ctrl-C; after a kill -9 the daemons and rbd-fuse
// die with tierbench (parent-death signal) and `tierbench cleanup`
// unmounts, detaches and removes the rest in one pass.
//
// librbd's write-back cache is off (rbd_cache = false, in the clients'
// configuration): with it on, an fsync would be answered by the client's
// cache policy rather than by what the cluster does. The loop device
// reads and writes the image's file with direct I/O, so the image is not
// cached a second time beneath the tier's filesystem. Through rbd-fuse
// (libfuse 2) the kernel's FUSE takes the file's lock for each write, so
// the image takes one write at a time: here 4k random writes at queue
// depth 32 reach about what one write in flight gives (the tier's probe
// shows it), which understates Ceph at depth but not an fsync's latency.
//
// In a study's matrix: one cluster per rbd tier for the whole study, and
// every run placed on that tier shares it. Runs get fresh folders on the
// tier's filesystem, removed after each run, but the cluster's own state
// (BlueStore's allocations, RocksDB's levels and WAL) carries over from
// run to run; the image is thin, so the first runs also allocate the
// objects later runs overwrite.
package rbdtier

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/ceph"
	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/tier/emulate"
)

// Ceph is the engine whose cluster serves an rbd tier: its Spec's
// components are what cluster places, its options what options sets;
// PreflightOptions says what this machine lacks to start a cluster with
// options; Open starts one, which serves the objects model
// (engine.NeedObjects). engine/ceph's Engine is the one there is (see
// package catalog).
type Ceph interface {
	Spec() engine.Spec
	PreflightOptions(options engine.Options) error
	Open(ctx context.Context, cfg engine.Config) (engine.DB, error)
}

// The cluster's components and the options that size it against the
// image: engine/ceph's own names.
const (
	compBlock = ceph.Block    // BlueStore's main device
	compDB    = ceph.BlockDB  // block.db
	compWAL   = ceph.BlockWAL // block.wal

	optOSDs      = ceph.OptOSDs
	optReplicas  = ceph.OptReplicas
	optBlockSize = ceph.OptBlockSize
	optDBSize    = ceph.OptDBSize
	optWALSize   = ceph.OptWALSize
)

// The image's share of each OSD's main device is at most 4/5: the rest is
// for RocksDB when it lives in the main device and for Ceph's full
// ratios (an OSD stops taking writes at 95%, and then the tier's I/O
// would wait, not fail).
const (
	headroomNum, headroomDen = 5, 4
	gib                      = int64(1) << 30
)

// ClusterOptions are the options spec's cluster is opened with, resolved
// once: the study's, with engine/ceph's defaults and block_size, when not
// given, raised from its default to hold the image (see Check).
func ClusterOptions(c Ceph, spec Spec) (engine.Options, error) {
	o, err := c.Spec().ResolveOptions(spec.Options)
	if _, given := spec.Options[optBlockSize]; given || err != nil {
		return o, err
	}
	need := (blockNeeded(spec.Size, o) + gib - 1) / gib * gib
	return o.With(optBlockSize, strconv.FormatInt(max(o.Size(optBlockSize), need), 10))
}

// blockNeeded is the main device size each OSD needs for its share of an
// image of size bytes.
func blockNeeded(size int64, o engine.Options) int64 {
	perOSD := size * int64(o.Int(optReplicas)) / int64(max(o.Int(optOSDs), 1))
	return perOSD * headroomNum / headroomDen
}

// Check refuses an rbd tier whose options engine/ceph does not take or
// whose OSDs cannot hold its image (block_size given too small).
func Check(c Ceph, spec Spec) error {
	o, err := ClusterOptions(c, spec)
	if err != nil {
		return err
	}
	if _, given := spec.Options[optBlockSize]; !given {
		return nil
	}
	if need := blockNeeded(spec.Size, o); o.Size(optBlockSize) < need {
		return fmt.Errorf("option block_size=%d cannot hold the image: %d OSD(s) with %d replica(s) of %d bytes need main devices of at least %d bytes each (a fifth spare for RocksDB and Ceph's full ratio); raise block_size to %dGiB, or leave it out and tierbench sizes it, or lower size",
			o.Size(optBlockSize), o.Int(optOSDs), o.Int(optReplicas), spec.Size, need, (need+gib-1)/gib)
	}
	return nil
}

// DeviceBytes is what spec's cluster puts on each tier it names: its OSDs'
// device files at full size, as engine/ceph places them (block.db only on
// a tier other than block's, block.wal only on one other than db's), two
// tiers taken for two filesystems. Nil when the options are wrong (Check
// says why).
func DeviceBytes(c Ceph, spec Spec) map[string]int64 {
	o, err := ClusterOptions(c, spec)
	if err != nil {
		return nil
	}
	return c.Spec().TierBytes(spec.Cluster, o)
}

// kernelRBD reports whether the kernel's rbd driver is loaded.
func kernelRBD() bool {
	_, err := os.Stat("/sys/bus/rbd")
	return err == nil
}

// Preflight reports whether this machine can serve spec's tier: the rbd
// tool, rbd-fuse (unless the kernel has rbd) and FUSE, the filesystem's
// tools and losetup, and Ceph with spec's options (engine/ceph's
// PreflightOptions).
func Preflight(c Ceph, spec Spec) error {
	need := []struct{ program, pkg string }{{"rbd", "ceph-common"}}
	if !kernelRBD() {
		need = append(need, struct{ program, pkg string }{"rbd-fuse", "rbd-fuse"})
	}
	for _, n := range need {
		if _, err := exec.LookPath(n.program); err != nil {
			return fmt.Errorf("%s is not installed: run `make setup` or apt-get install %s", n.program, n.pkg)
		}
	}
	if !kernelRBD() {
		if err := emulate.Supported(); err != nil {
			return fmt.Errorf("rbd-fuse needs FUSE: %w", err)
		}
	}
	if err := tier.CheckLoopTools(spec.FS); err != nil {
		return err
	}
	o, err := ClusterOptions(c, spec)
	if err == nil {
		err = c.PreflightOptions(o)
	}
	if err != nil {
		return fmt.Errorf("its Ceph cluster: %w", err)
	}
	return nil
}

// Spec asks for a block image in a Ceph cluster started for the study
// on other tiers of it, formatted and mounted as a loop tier's image is.
type Spec struct {
	Size int64 // bytes
	FS   string
	// Cluster places the cluster's components (Ceph's block, db, wal) on
	// other tiers of the study, by component; every component is named.
	Cluster map[string]string
	// Options are the cluster engine's options, in normal form.
	Options map[string]string
}

// Tier is the rbd kind of tier (tier.Served): Spec, served by a cluster
// of Ceph.
type Tier struct {
	Spec
	Ceph Ceph
}

var _ tier.Served = Tier{}

func (Tier) Key() string          { return "rbd" }
func (t Tier) Bytes() int64       { return t.Size }
func (t Tier) Preflight() error   { return Preflight(t.Ceph, t.Spec) }
func (t Tier) Filesystem() string { return t.FS }

// Abilities: the power-loss layer covers this machine's file system,
// not a cluster's, and the image's speed is its cluster's. Its
// atomic-write unit is the conservative sector: an image's object
// writes are not promised to be whole beyond it.
func (Tier) Abilities() tier.Abilities {
	return tier.Abilities{Mounts: true, Served: true, FixedSpeed: "its cluster's", Layer: tier.LayerUnmodelled,
		Why:         "a Ceph image's writes are made durable by its cluster, not by this machine's file system",
		AtomicWrite: tier.SectorAtomic, WithoutRoot: "{path: <folder>}"}
}

// Of is kind as an rbd tier, ok false for any other kind.
func Of(kind tier.Kind) (Tier, bool) {
	t, ok := kind.(Tier)
	return t, ok
}

// Timing.
const (
	// imageTimeout bounds rbd-fuse's start until the image shows in its
	// mount, and each rbd command.
	imageTimeout = time.Minute
	// fuseStop is how long rbd-fuse may take to unmount and exit after
	// SIGTERM.
	fuseStop = 20 * time.Second
	// mountTimeout is the clients' client_mount_timeout, in seconds: how
	// long a client waits for the monitor before it gives up.
	mountTimeout = 30
)

// Serve starts the tier's cluster on the tiers it names, makes its image
// and exposes it, every step recorded with p.
func (t Tier) Serve(ctx context.Context, w *tier.Workspace, p *tier.Provisioner, name string) (tier.Volume, error) {
	v, err := t.serve(ctx, w, p, name)
	if err != nil {
		return tier.Volume{}, fmt.Errorf("tier %s: %w", name, err)
	}
	return v, nil
}

func (t Tier) serve(ctx context.Context, w *tier.Workspace, p *tier.Provisioner, name string) (tier.Volume, error) {
	spec := t.Spec
	dirs, used, err := componentDirs(p, w.Tiers(), name, spec.Cluster)
	if err != nil {
		return tier.Volume{}, err
	}
	private := filepath.Join(w.Scratch(), "rbd-"+name)
	if err := p.Mkdir(private); err != nil {
		return tier.Volume{}, err
	}
	if err := os.Chmod(private, 0o700); err != nil {
		return tier.Volume{}, err
	}
	opts, err := ClusterOptions(t.Ceph, spec)
	if err != nil {
		return tier.Volume{}, err
	}
	db, err := t.Ceph.Open(ctx, engine.Config{Dirs: dirs, Durability: engine.Sync, Options: opts,
		Scratch: w.Scratch(), Track: w.TrackProcessAs("Ceph daemon of tier " + name)})
	if err != nil {
		return tier.Volume{}, fmt.Errorf("start its Ceph cluster: %w", err)
	}
	p.Defer("stop the Ceph cluster of tier "+name, db.Close)
	objects, err := engine.NeedObjects(db)
	if err != nil {
		return tier.Volume{}, err
	}
	c := client{rados: objects.Rados(), image: p.Tag + "-" + name}
	if c.conf, err = writeClientConf(private, c.rados); err != nil {
		return tier.Volume{}, err
	}
	if err := c.create(ctx, spec.Size); err != nil {
		return tier.Volume{}, err
	}
	vol := tier.Volume{Durable: true}
	if cv, ok := db.(engine.Caveater); ok {
		vol.Caveats = cv.Caveats // the cluster's spill-over, as a ceph run's
	}
	var how string
	if kernelRBD() {
		how = "Ceph RBD image mapped by the kernel's rbd driver"
		vol.Device, err = c.mapImage(ctx, p)
	} else {
		how = "Ceph RBD image through rbd-fuse and a loop device (userspace: no kernel rbd here; FUSE takes one write at a time); librbd cache off"
		vol.File, err = c.serveFUSE(ctx, w, p, name, private)
	}
	if err != nil {
		return tier.Volume{}, err
	}
	var volatile []string
	for _, name := range used {
		if info := w.Tiers()[name]; !info.Durable {
			vol.Durable = false
			volatile = append(volatile, fmt.Sprintf("tier %s: %s", name, info.Note))
		}
	}
	vol.Note = fmt.Sprintf("%s; as durable as the cluster's tiers (%s)", how, clusterText(spec.Cluster))
	if len(volatile) > 0 {
		vol.Note += ", which are not: " + strings.Join(volatile, "; ")
	}
	return vol, nil
}

// components are the cluster's, in engine/ceph's order.
var components = []string{compBlock, compDB, compWAL}

// clusterText says where the cluster's components are: "block on ssd, db
// and wal on pmem".
func clusterText(cluster map[string]string) string {
	var parts []string
	var names []string
	byTier := map[string][]string{}
	for _, c := range components {
		if _, seen := byTier[cluster[c]]; !seen {
			names = append(names, cluster[c])
		}
		byTier[cluster[c]] = append(byTier[cluster[c]], c)
	}
	for _, n := range names {
		parts = append(parts, strings.Join(byTier[n], " and ")+" on "+n)
	}
	return strings.Join(parts, ", ")
}

// componentDirs makes a folder per component, recorded, under
// tierbench-rbd-<tier> on the tier cluster places it on, and returns the
// folders and the tiers used.
func componentDirs(p *tier.Provisioner, tiers map[string]tier.Info, name string, cluster map[string]string) (map[string]string, []string, error) {
	dirs := map[string]string{}
	roots := map[string]string{}
	var used []string
	for _, c := range components {
		tname := cluster[c]
		info, ok := tiers[tname]
		if !ok {
			return nil, nil, fmt.Errorf("the cluster's %s is on tier %q, which is not ready (an rbd tier, or not declared)", c, tname)
		}
		root, ok := roots[tname]
		if !ok {
			root = filepath.Join(info.Path, "tierbench-rbd-"+name)
			if err := p.Mkdir(root); err != nil {
				return nil, nil, fmt.Errorf("folder for the cluster on tier %s: %w", tname, err)
			}
			roots[tname] = root
			used = append(used, tname)
		}
		dirs[c] = filepath.Join(root, c)
		if err := os.Mkdir(dirs[c], 0o755); err != nil {
			return nil, nil, fmt.Errorf("folder for the cluster's %s: %w", c, err)
		}
	}
	return dirs, used, nil
}

// client reaches the cluster's image as client.admin.
type client struct {
	rados engine.RadosCluster
	conf  string // writeClientConf's
	image string // in rados.Pool
}

// spec is the image as rbd names it: pool/image.
func (c client) spec() string { return c.rados.Pool + "/" + c.image }

// writeClientConf writes the clients' configuration for the image: the
// cluster's (monitors, keyring path: no key), librbd's cache off, and no
// admin socket or log file of clients outside the private folder.
func writeClientConf(private string, rados engine.RadosCluster) (string, error) {
	base, err := os.ReadFile(rados.Conf)
	if err != nil {
		return "", fmt.Errorf("the cluster's client configuration: %w", err)
	}
	path := filepath.Join(private, "rbd.conf")
	conf := string(base) + fmt.Sprintf(`
[client]
# fsync latencies must be the cluster's, not librbd's write-back cache's.
rbd_cache = false
client_mount_timeout = %d
admin_socket = %s
log_file = %s
`, mountTimeout, filepath.Join(private, "$name.$pid.asok"), filepath.Join(private, "$name.$pid.log"))
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return path, nil
}

// rbd runs the rbd tool as the cluster's client and returns its output.
func (c client) rbd(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, imageTimeout)
	defer cancel()
	out, err := proc.Output(ctx, "rbd", []string{"--conf", c.conf, "--id", c.rados.ID}, args...)
	return string(out), err
}

// create makes the image: thin, size bytes, with the features every
// client (librbd and the kernel's driver) takes.
func (c client) create(ctx context.Context, size int64) error {
	_, err := c.rbd(ctx, "create", "--size", strconv.FormatInt(size, 10)+"B", "--image-feature", "layering,exclusive-lock", c.spec())
	return err
}

// serveFUSE starts rbd-fuse on a mount point of its own, recorded before
// it mounts, and returns the image's file in it once it shows at its
// size. Close stops rbd-fuse, which unmounts.
func (c client) serveFUSE(ctx context.Context, w *tier.Workspace, p *tier.Provisioner, name, private string) (string, error) {
	bin, err := exec.LookPath("rbd-fuse")
	if err != nil {
		return "", errors.New("rbd-fuse is not installed: run `make setup` or apt-get install rbd-fuse")
	}
	mnt, err := p.MountPoint(name, "rbd")
	if err != nil {
		return "", err
	}
	file := filepath.Join(mnt, c.image)
	_, err = p.Step(tier.Resource{Kind: tier.KindMount, Path: mnt}, func() error {
		// -f: in the foreground, so it is tracked and stopped as a
		// process; -r: only this image.
		proc, err := startDaemon("rbd-fuse", bin, private, filepath.Join(private, "rbd-fuse.log"),
			[]string{mnt, "-f", "-c", c.conf, "-p", c.rados.Pool, "-r", c.image}, w.TrackProcessAs("rbd-fuse of tier "+name))
		if err != nil {
			return err
		}
		p.OnClose(tier.KindMount, mnt, func() error { return stopFUSE(proc, mnt) })
		return waitFile(ctx, proc, file)
	})
	if err != nil {
		return "", fmt.Errorf("expose the image with rbd-fuse on %s: %w", mnt, err)
	}
	return file, nil
}

// waitFile waits until rbd-fuse shows the image's file: it answers once
// it has connected to the cluster.
func waitFile(ctx context.Context, proc *daemon, file string) error {
	ctx, cancel := context.WithTimeout(ctx, imageTimeout)
	defer cancel()
	for {
		if err := proc.died(); err != nil {
			return err
		}
		_, err := os.Stat(file)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not show: %w (last: %v); rbd-fuse's log: %s", file, ctx.Err(), err, proc.logTail(5))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stopFUSE stops rbd-fuse (SIGTERM: it unmounts and exits) and unmounts
// what it may have left.
func stopFUSE(proc *daemon, mnt string) error {
	return errors.Join(proc.stop(fuseStop), tier.Undo(tier.Resource{Kind: tier.KindMount, Path: mnt}))
}

// KindMapped is a ledger record of an image the kernel's rbd driver
// mapped (Path: pool/image), which Unmap undoes.
const KindMapped = "rbd-mapped"

// KindMapped is registered with package tier, which cannot undo it itself.
func init() { tier.RegisterKind(KindMapped, tier.KindFuncs{Undo: Unmap}) }

// mapImage maps the image with the kernel's driver, recorded first, and
// returns its device. Untested here: this kernel has no rbd module.
func (c client) mapImage(ctx context.Context, p *tier.Provisioner) (string, error) {
	var dev string
	r := tier.Resource{Kind: KindMapped, Path: c.spec()}
	_, err := p.Step(r, func() error {
		p.OnClose(r.Kind, r.Path, func() error { return Unmap(r) })
		out, err := c.rbd(ctx, "map", c.spec())
		dev = strings.TrimSpace(out)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("map the image: %w", err)
	}
	return dev, nil
}

// rbdBus is the kernel rbd driver's sysfs folder.
const rbdBus = "/sys/bus/rbd"

// Unmap removes the kernel's mappings of the image r records, by force:
// after a kill its cluster is gone, and nothing that would wait for it
// is left above it (the tier's mount is undone first). An image no longer
// mapped counts as undone.
func Unmap(r tier.Resource) error {
	pool, image, _ := strings.Cut(r.Path, "/")
	devs, _ := filepath.Glob(filepath.Join(rbdBus, "devices", "*"))
	remove := filepath.Join(rbdBus, "remove_single_major")
	if _, err := os.Stat(remove); err != nil {
		remove = filepath.Join(rbdBus, "remove")
	}
	var errs []error
	for _, d := range devs {
		p, _ := os.ReadFile(filepath.Join(d, "pool"))
		n, _ := os.ReadFile(filepath.Join(d, "name"))
		if strings.TrimSpace(string(p)) != pool || strings.TrimSpace(string(n)) != image {
			continue
		}
		if err := os.WriteFile(remove, []byte(filepath.Base(d)+" force"), 0o200); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("unmap rbd device %s (%s): %w", filepath.Base(d), r.Path, err))
		}
	}
	return errors.Join(errs...)
}
