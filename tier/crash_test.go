package tier

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/testenv"
	"github.com/tierbench/tierbench/tier/emulate"
	"github.com/tierbench/tierbench/tier/profile"
)

// shmDir returns a fresh folder on /dev/shm (tmpfs), removed at the end.
func shmDir(t *testing.T, name string) string {
	t.Helper()
	if err := CheckInRAM("/dev/shm"); err != nil {
		testenv.Skipf(t, "no tmpfs at /dev/shm: %v", err)
	}
	dir, err := os.MkdirTemp("/dev/shm", "tierbench-test-"+name+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// writeFile writes data to path and, if synced, fsyncs it and its folder:
// what makes it durable under the crash-capable layer.
func writeFile(t *testing.T, path, data string, synced bool) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
	if synced {
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if synced {
		d, err := os.Open(filepath.Dir(path))
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Sync(); err != nil {
			t.Fatal(err)
		}
		d.Close()
	}
}

// TestPowerCutOnRAMTiers cuts the power under two tiers in RAM, as a
// power crash run does. A folder on tmpfs that the study put under the
// crash-capable layer (crash: power marks every folder tier so) gets no
// layer: it keeps nothing anyway, and the run's emptying of it at the cut
// must not meet a layer that answers EIO (the "crash: wipe .../wal:
// input/output error" of a WAL on /dev/shm). A pmem_emulated folder is
// served through the layer and recorded as durable and emulated (so is a
// tmpfs of its size form, as root): a file synced before the cut is there
// after it, one not synced is gone; Close leaves nothing behind.
func TestPowerCutOnRAMTiers(t *testing.T) {
	if err := emulate.Supported(); err != nil {
		testenv.Skipf(t, "no FUSE: %v", err)
	}
	ram, pm, pp := shmDir(t, "ram"), shmDir(t, "pmem"), shmDir(t, "pmemp")
	prof, err := profile.Find("optane-pmem-100")
	if err != nil {
		t.Fatal(err)
	}
	ledger, err := OpenLedger(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	specs := []Spec{
		{Name: "ram", Path: filepath.Join(ram, "tier"), Crashes: Crashes{PowerCut: true}},
		{Name: "pmem", Path: filepath.Join(pm, "tier"), Kind: PmemEmulatedSpec{Path: filepath.Join(pm, "tier")}},
		// The PMEM profile's latencies over the same layer.
		{Name: "pmemp", Path: filepath.Join(pp, "tier"), Kind: PmemEmulatedSpec{Path: filepath.Join(pp, "tier")}, Profile: &prof},
	}
	if os.Geteuid() == 0 { // pmem_emulated: {size: ...} mounts a tmpfs
		specs = append(specs, Spec{Name: "pmem2", Kind: PmemEmulatedSpec{Size: 16 << 20}})
	}
	ws, err := NewWorkspace(context.Background(), ledger, "study1", specs...)
	if err != nil {
		t.Fatal(err)
	}
	if p2, ok := ws.Tiers()["pmem2"]; ok && (!p2.Durable || !p2.LayerDurable || !strings.HasPrefix(p2.FSType, "fuse.")) {
		t.Errorf("tier pmem2: %+v; want a tmpfs under the FUSE layer, durable and pmem_emulated", p2)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			ws.Close()
		}
	})
	ri, pi, ppi := ws.Tiers()["ram"], ws.Tiers()["pmem"], ws.Tiers()["pmemp"]
	if ri.FSType != "tmpfs" || ri.Durable || ri.Emulated || ri.LayerDurable {
		t.Errorf("tier ram: %+v; want the tmpfs folder itself, not durable, no layer", ri)
	}
	if !strings.HasPrefix(pi.FSType, "fuse.") || !pi.Durable || !pi.Emulated || !pi.LayerDurable ||
		!strings.Contains(pi.Emulation, "persistent-memory-like") || !strings.Contains(pi.Emulation, "not persistent memory's") {
		t.Errorf("tier pmem: %+v; want it under the FUSE layer, durable, emulated and labelled persistent-memory-like", pi)
	}
	if !ppi.Durable || !ppi.LayerDurable || !strings.Contains(ppi.Emulation, "profile optane-pmem-100") {
		t.Errorf("tier pmemp: %+v; want it durable, pmem_emulated and naming its profile", ppi)
	}

	if err := ws.Settle([]string{"ram", "pmem", "pmemp"}); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{ri.Path, pi.Path, ppi.Path} {
		if err := os.Mkdir(filepath.Join(dir, "wal"), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, "wal", "synced"), "acknowledged", true)
		writeFile(t, filepath.Join(dir, "wal", "unsynced"), "in flight", false)
	}
	// Make the folder wal itself durable on the layer: a folder entry
	// needs an fsync of its parent.
	for _, p := range []string{pi.Path, ppi.Path} {
		if d, err := os.Open(p); err == nil {
			d.Sync()
			d.Close()
		}
	}

	lost, err := ws.PowerCut([]string{"ram", "pmem", "pmemp"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadDir(pi.Path); err == nil {
		t.Error("the pmem tier answered during the power cut")
	}
	// What the runner does between the cut and the power coming back.
	if err := Wipe(filepath.Join(ri.Path, "wal")); err != nil {
		t.Errorf("emptying the tmpfs folder at the cut: %v", err)
	}
	if err := ws.PowerOn([]string{"ram", "pmem", "pmemp"}); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(filepath.Join(ri.Path, "wal")); len(left) != 0 {
		t.Errorf("tmpfs folder after the cut holds %v, want nothing", left)
	}
	for name, p := range map[string]string{"pmem": pi.Path, "pmemp": ppi.Path} {
		got, err := os.ReadFile(filepath.Join(p, "wal", "synced"))
		if err != nil || string(got) != "acknowledged" {
			t.Errorf("synced file on the %s tier after the cut: %q, %v; want it kept", name, got, err)
		}
		if _, err := os.Stat(filepath.Join(p, "wal", "unsynced")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("unsynced file on the %s tier after the cut: %v; want it gone", name, err)
		}
	}
	t.Logf("the layer undid: %s", LostText(lost))

	closed = true
	if err := ws.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := ledger.All(); len(left) != 0 {
		t.Errorf("left in the ledger: %v", left)
	}
}

// TestPmemEmulatedRefusesDisk: a pmem_emulated folder that is not in RAM
// would be a disk under the layer named as persistent memory.
func TestPmemEmulatedRefusesDisk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tier")
	if CheckInRAM(dir) == nil {
		t.Skipf("%s is in RAM here", dir)
	}
	s := Spec{Name: "pm", Path: dir, Kind: PmemEmulatedSpec{Path: dir}}
	_, err := Layering(s, Crashes{}, HostOf(s))
	if err == nil || !strings.Contains(err.Error(), "not RAM") || !strings.Contains(err.Error(), "/dev/shm") {
		t.Errorf("err %v; want it refused, naming a folder in RAM", err)
	}
}

// TestAtomicWriteReachesTheLayer: a tier's atomic-write unit, decided
// with its stack (here declared: 16 KiB), is the unit its power-loss
// layer tears writes at; a tier that declares none takes its kind's
// (512 B on a folder). A tier of a study with reorder cuts (Crashes.
// Reorder) gets a layer that logs its writes; one without refuses them.
func TestAtomicWriteReachesTheLayer(t *testing.T) {
	if err := emulate.Supported(); err != nil {
		testenv.Skipf(t, "no FUSE: %v", err)
	}
	if CheckInRAM(t.TempDir()) == nil {
		t.Skip("the temporary folder is in RAM here: a folder there needs no power-loss layer")
	}
	ledger, err := OpenLedger(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	cut := Crashes{PowerCut: true}
	ws, err := NewWorkspace(context.Background(), ledger, "study1",
		Spec{Name: "wide", Path: filepath.Join(t.TempDir(), "wide"), Kind: FolderSpec{}, Crashes: Crashes{PowerCut: true, Reorder: true}, AtomicWrite: 16 << 10, VolatileCache: true},
		Spec{Name: "plain", Path: filepath.Join(t.TempDir(), "plain"), Kind: FolderSpec{}, Crashes: cut})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			ws.Close()
		}
	})
	for name, want := range map[string]int64{"wide": 16 << 10, "plain": 512} {
		if got := ws.Tiers()[name].AtomicWrite; got != want {
			t.Errorf("tier %s records a %d-byte unit, want %d", name, got, want)
		}
		volatile := name == "wide"
		if got := ws.Tiers()[name].VolatileCache; got != volatile {
			t.Errorf("tier %s records volatile_cache %v, want %v", name, got, volatile)
		}
		// An O_DIRECT write never flushed: a volatile cache loses it at
		// a cut; a protected device had it durable when it returned.
		file, written := writeDirectUnsynced(t, ws.Tiers()[name].Path)
		if _, _, err := ws.PowerCutModel([]string{name}, emulate.Model{}); err != nil {
			t.Fatal(err)
		}
		if err := ws.PowerOn([]string{name}); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if kept := bytes.Equal(got, written); kept == volatile {
			t.Errorf("tier %s (volatile cache %v): the unflushed O_DIRECT write kept %v after the cut", name, volatile, kept)
		}
		_, sum, err := ws.PowerCutModel([]string{name}, emulate.Model{Kind: emulate.ModelTorn, Keep: 0.5, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if unit := sum.AtomicWrite; unit != want {
			t.Errorf("tier %s's layer tears at %d bytes, want %d", name, unit, want)
		}
		if err := ws.PowerOn([]string{name}); err != nil {
			t.Fatal(err)
		}
		// Only a tier of a study with reorder cuts logs its writes.
		_, _, err = ws.PowerCutModel([]string{name}, emulate.Model{Kind: emulate.ModelReorder, Keep: 0.5, Seed: 1})
		if logs := name == "wide"; (err == nil) != logs {
			t.Errorf("tier %s (logs writes %v): a reorder cut gave %v", name, logs, err)
		}
		if err := ws.PowerOn([]string{name}); err != nil {
			t.Fatal(err)
		}
	}
	closed = true
	if err := ws.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := ledger.All(); len(left) != 0 {
		t.Errorf("left in the ledger: %v", left)
	}
}

// writeDirectUnsynced makes a durable 4 KiB file of zeros in dir, then
// overwrites it with O_DIRECT and no fsync; it returns the file and the
// bytes written.
func writeDirectUnsynced(t *testing.T, dir string) (string, []byte) {
	t.Helper()
	file := filepath.Join(dir, "direct")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(make([]byte, 4096)); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	d.Close()
	fd, err := unix.Open(file, unix.O_WRONLY|unix.O_DIRECT, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	buf, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(buf)
	for i := range buf {
		buf[i] = byte(i%251) + 1
	}
	if _, err := unix.Pwrite(fd, buf, 0); err != nil {
		t.Fatal(err)
	}
	return file, bytes.Clone(buf)
}
