package rbdtier

import (
	"reflect"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/engine/ceph"
)

// TestCephNames checks the names this package takes from engine/ceph
// without importing it (the test may): the cluster's components, in its
// order, and the options that size its devices.
func TestCephNames(t *testing.T) {
	var c Ceph = ceph.Engine{}
	spec := c.Spec()
	if got, want := spec.ComponentNames(), components; !reflect.DeepEqual(got, want) {
		t.Errorf("engine/ceph's components are %v, this package's %v", got, want)
	}
	if got, want := components, []string{ceph.Block, ceph.BlockDB, ceph.BlockWAL}; !reflect.DeepEqual(got, want) {
		t.Errorf("components %v, engine/ceph's block, db and wal %v", got, want)
	}
	for _, o := range []string{optOSDs, optReplicas, optBlockSize, optDBSize, optWALSize} {
		if _, ok := spec.Option(o); !ok {
			t.Errorf("engine/ceph has no option %s", o)
		}
	}
}

// TestSizing sizes a cluster to its image: block_size when left out,
// what a given one must hold, and the device files on each tier.
func TestSizing(t *testing.T) {
	c := ceph.Engine{}
	const g = int64(1) << 30
	baseline := map[string]string{"block": "ssd", "db": "ssd", "wal": "ssd"}
	ref1 := map[string]string{"block": "ssd", "db": "pmem", "wal": "pmem"}
	apart := map[string]string{"block": "ssd", "db": "pmem", "wal": "nvme"}
	for _, tc := range []struct {
		name      string
		spec      Spec
		blockSize string // ClusterOptions' block_size
		devices   map[string]int64
		err       string // Check's, "" for none
	}{
		{"small image: engine/ceph's default", Spec{Size: g, Cluster: baseline}, "2147483648", map[string]int64{"ssd": 2 * g}, ""},
		{"4GiB image: a fifth spare, rounded up", Spec{Size: 4 * g, Cluster: baseline}, "5368709120", map[string]int64{"ssd": 5 * g}, ""},
		{"two OSDs share an image", Spec{Size: 8 * g, Cluster: baseline, Options: map[string]string{"osds": "2"}}, "5368709120", map[string]int64{"ssd": 10 * g}, ""},
		{"db and wal on pmem together", Spec{Size: g, Cluster: ref1, Options: map[string]string{"db_size": "1073741824"}}, "2147483648",
			map[string]int64{"ssd": 2 * g, "pmem": g}, ""},
		{"each device apart", Spec{Size: g, Cluster: apart}, "2147483648", map[string]int64{"ssd": 2 * g, "pmem": g, "nvme": g}, ""},
		{"block_size given too small", Spec{Size: 4 * g, Cluster: baseline, Options: map[string]string{"block_size": "2147483648"}}, "2147483648",
			map[string]int64{"ssd": 2 * g}, "raise block_size to 5GiB"},
		{"unknown option", Spec{Size: g, Cluster: baseline, Options: map[string]string{"pool": "x"}}, "", nil, `unknown option "pool" for engine ceph`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := "" // a wrong option: no options (Check says why)
			if o, err := ClusterOptions(c, tc.spec); err == nil {
				got = o.Text("block_size")
			}
			if got != tc.blockSize {
				t.Errorf("block_size %q, want %q", got, tc.blockSize)
			}
			if got := DeviceBytes(c, tc.spec); !reflect.DeepEqual(got, tc.devices) {
				t.Errorf("device bytes %v, want %v", got, tc.devices)
			}
			err := Check(c, tc.spec)
			if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Check: %v, want %q", err, tc.err)
			}
		})
	}
	if got := clusterText(ref1); got != "block on ssd, db and wal on pmem" {
		t.Errorf("clusterText: %q", got)
	}
}
