package ceph

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dustin/go-humanize"
	"golang.org/x/sys/unix"
)

// Where BlueStore's devices go. Each OSD gets a file per device on its
// component's tier (BlueStore on files, no LVM); a device is separate only
// when its tier is another filesystem than the one it would otherwise
// share, since two files on one filesystem are one device to the kernel.

// device is one of an OSD's BlueStore device files.
type device struct {
	component string // block, db or wal
	dir       string // the component's folder on its tier
	size      int64
	suffix    string // of the file name: osd.N.<suffix>
	fsDev     uint64 // st_dev of dir: which filesystem it is on
}

// file is OSD id's file of the device.
func (d device) file(id int) string {
	return filepath.Join(d.dir, fmt.Sprintf("osd.%d.%s", id, d.suffix))
}

// confPath is the file in ceph.conf, for every OSD ($id).
func (d device) confPath() string { return filepath.Join(d.dir, "osd.$id."+d.suffix) }

// devices are an OSD's BlueStore devices: block always, db and wal when
// they are on a filesystem of their own (nil otherwise: BlueStore keeps
// RocksDB, or its WAL, on the device below).
type devices struct {
	block   device
	db, wal *device
}

// planDevices decides from the components' folders which devices are
// separate. The filesystem is told by st_dev, not by the tier's device
// name: two tmpfs tiers are both "tmpfs" but different filesystems.
//
//   - db on block's filesystem: no block.db; RocksDB lives inside the
//     main device (the baseline).
//   - wal on db's filesystem (or block's, when db is inline): no
//     block.wal; the WAL goes with the DB, as BlueStore does when it has
//     no device of its own.
func planDevices(blockDir, dbDir, walDir string, s settings) (devices, error) {
	devs := [3]device{
		{component: Block, dir: blockDir, size: s.blockSize, suffix: "block"},
		{component: BlockDB, dir: dbDir, size: s.dbSize, suffix: "db"},
		{component: BlockWAL, dir: walDir, size: s.walSize, suffix: "wal"},
	}
	for i := range devs {
		var st unix.Stat_t
		if err := unix.Stat(devs[i].dir, &st); err != nil {
			return devices{}, fmt.Errorf("folder of %s: %w", devs[i].component, err)
		}
		devs[i].fsDev = st.Dev
	}
	out := devices{block: devs[0]}
	below := devs[0].fsDev // the filesystem the WAL would share
	if devs[1].fsDev != devs[0].fsDev {
		out.db = &devs[1]
		below = devs[1].fsDev
	}
	if devs[2].fsDev != below {
		out.wal = &devs[2]
	}
	return out, nil
}

// all lists the separate devices, block first.
func (ds devices) all() []device {
	out := []device{ds.block}
	for _, d := range []*device{ds.db, ds.wal} {
		if d != nil {
			out = append(out, *d)
		}
	}
	return out
}

// files lists every device file of osds OSDs.
func (ds devices) files(osds int) []string {
	var out []string
	for id := range osds {
		for _, d := range ds.all() {
			out = append(out, d.file(id))
		}
	}
	return out
}

// checkSpace refuses devices that do not fit their tier's free space: the
// files are sparse at first, but a benchmark that fills them must not hit
// a full tier instead of a full OSD.
func (ds devices) checkSpace(osds int) error {
	need := map[uint64]int64{}
	users := map[uint64][]string{}
	dirs := map[uint64]string{}
	for _, d := range ds.all() {
		need[d.fsDev] += int64(osds) * d.size
		users[d.fsDev] = append(users[d.fsDev], d.component)
		dirs[d.fsDev] = d.dir
	}
	keys := make([]uint64, 0, len(need))
	for k := range need {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	for _, k := range keys {
		var st unix.Statfs_t
		if err := unix.Statfs(dirs[k], &st); err != nil {
			return fmt.Errorf("free space of %s: %w", dirs[k], err)
		}
		free := int64(st.Bavail) * st.Bsize
		if need[k] > free {
			opts := make([]string, len(users[k]))
			for i, c := range users[k] {
				opts[i] = c + "_size"
			}
			return fmt.Errorf("the tier of %s (%s) has %s free, but %d OSD(s) need %s there: lower %s or give the tier more space",
				strings.Join(users[k], " and "), dirs[k], humanize.IBytes(uint64(free)), osds, humanize.IBytes(uint64(need[k])), strings.Join(opts, " or "))
		}
	}
	return nil
}

// confLines are the [osd] settings that place the devices: each file is
// made by ceph-osd --mkfs (_create) at its size. The paths are outside the
// OSD's data folder, where mkfs puts a symlink to each (a path inside it
// fails with "Too many levels of symbolic links").
func (ds devices) confLines() []confLine {
	lines := []confLine{
		{"bluestore_block_path", ds.block.confPath()},
		{"bluestore_block_size", itoa(ds.block.size)},
		{"bluestore_block_create", "true"},
	}
	for _, d := range []struct {
		key string
		dev *device
	}{{"db", ds.db}, {"wal", ds.wal}} {
		if d.dev == nil {
			continue
		}
		lines = append(lines,
			confLine{"bluestore_block_" + d.key + "_path", d.dev.confPath()},
			confLine{"bluestore_block_" + d.key + "_size", itoa(d.dev.size)},
			confLine{"bluestore_block_" + d.key + "_create", "true"})
	}
	return lines
}
