package profile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Every shipped profile reads, checks, names a source and round-trips
// through Marshal.
func TestShipped(t *testing.T) {
	all, err := Shipped()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"aws-gp3", "hdd-7200", "nvme-tlc", "optane-p4800x", "optane-pmem-100", "sata-ssd"}
	if got := strings.Join(Names(), " "); got != strings.Join(want, " ") {
		t.Fatalf("names %q, want %q", got, want)
	}
	for _, p := range all {
		if !strings.Contains(p.Source, "http") {
			t.Errorf("%s: source quotes no URL: %q", p.Name, p.Source)
		}
		data, err := p.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse(data, "")
		if err != nil {
			t.Fatalf("%s: marshalled profile does not read back: %v\n%s", p.Name, err, data)
		}
		if back.Latency != p.Latency || back.IOPS != p.IOPS || back.Bandwidth != p.Bandwidth || back.Source != p.Source {
			t.Errorf("%s: round trip changed the profile:\n%+v\n%+v", p.Name, p, back)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := write("mine.yaml", "latency: {fsync: {p50: 2ms, p99: 5ms}}\ndurability: synced\nsource: measured by hand\n")
	for _, c := range []struct {
		name, ref, want string
	}{
		{"shipped", "hdd-7200", ""},
		{"file by absolute path", good, ""},
		{"file relative to the study", "mine.yaml", ""},
		{"typo", "hdd-720", `did you mean "hdd-7200"`},
		{"part of a name", "optane", `did you mean "optane-p4800x"`},
		{"nothing like it", "floppy", "use one of aws-gp3"},
		{"missing file", "nope.yaml", "no such file"},
		{"not yaml", write("bad.yaml", "latency: [\n"), "not a profile"},
		{"unknown key", write("key.yaml", "latency: {fsync: {p50: 1ms}}\ndurability: synced\nsource: x\nspeed: 3\n"), "field speed not found"},
		{"bad duration", write("dur.yaml", "latency: {fsync: {p50: fast}}\ndurability: synced\nsource: x\n"), `latency "fast" is not a duration`},
		{"p99 below p50", write("tail.yaml", "latency: {read: {p50: 2ms, p99: 1ms}}\ndurability: synced\nsource: x\n"), "below its p50"},
		{"no latency", write("none.yaml", "durability: synced\nsource: x\n"), "latency sets nothing"},
		{"bad durability", write("dura.yaml", "latency: {fsync: {p50: 1ms}}\ndurability: maybe\nsource: x\n"), "durability \"maybe\""},
		{"no source", write("src.yaml", "latency: {fsync: {p50: 1ms}}\ndurability: synced\n"), "source is empty"},
		{"syncs at once", write("once.yaml", "latency: {fsync: {p50: 1ms}}\nfsync_at_once: [{syncs: 2, p50: 2ms, p99: 3ms}, {syncs: 8, p50: 4ms}]\ndurability: synced\nsource: x\n"), ""},
		{"syncs at once not rising", write("once1.yaml", "latency: {fsync: {p50: 1ms}}\nfsync_at_once: [{syncs: 4, p50: 2ms}, {syncs: 2, p50: 3ms}]\ndurability: synced\nsource: x\n"), "syncs 2 must be above 4"},
		{"syncs at once from one", write("once2.yaml", "latency: {fsync: {p50: 1ms}}\nfsync_at_once: [{syncs: 1, p50: 2ms}]\ndurability: synced\nsource: x\n"), "syncs 1 must be above 1"},
		{"syncs at once without p50", write("once3.yaml", "latency: {fsync: {p50: 1ms}}\nfsync_at_once: [{syncs: 2, p99: 2ms}]\ndurability: synced\nsource: x\n"), "2 syncs has no p50"},
		{"syncs at once past the bound", write("once5.yaml", "latency: {fsync: {p50: 1ms}}\nfsync_at_once: [{syncs: 2, p50: 2ms}, {syncs: 100000000, p50: 3ms}]\ndurability: synced\nsource: x\n"), "syncs 100000000 is more than 1024"},
		{"iops NaN", write("nan.yaml", "latency: {fsync: {p50: 1ms}}\niops: {read: .nan}\ndurability: synced\nsource: x\n"), "iops read NaN is not a number from 0 to 1e+09"},
		{"bandwidth huge", write("huge.yaml", "latency: {fsync: {p50: 1ms}}\nbandwidth_mib_s: {write: 1e300}\ndurability: synced\nsource: x\n"), "bandwidth_mib_s write 1e+300 is not a number"},
		{"negative latency", write("neg.yaml", "latency: {fsync: {p50: -1ms}}\ndurability: synced\nsource: x\n"), `latency "-1ms" is not a duration between 0 and 1m`},
		{"a second document", write("two.yaml", "latency: {fsync: {p50: 1ms}}\ndurability: synced\nsource: x\n---\nlatency: {fsync: {p50: 9ms}}\n"), "second YAML document"},
		{"duplicate key", write("dup.yaml", "latency: {fsync: {p50: 1ms}}\ndurability: synced\ndurability: none\nsource: x\n"), `mapping key "durability" already defined`},
		{"name with an escape", write("esc.yaml", "name: \"\\e[31mred\"\nlatency: {fsync: {p50: 1ms}}\ndurability: synced\nsource: x\n"), `name "\x1b[31mred" must be one word`},
		{"source with a right-to-left override", write("bidi.yaml", "latency: {fsync: {p50: 1ms}}\ndurability: synced\nsource: \"a \\u202E b\"\n"), `source "a \u202e b" holds a control or bidirectional character (U+202E)`},
		{"atomic write", write("aw.yaml", "latency: {fsync: {p50: 1ms}}\natomic_write: 16KiB\ndurability: synced\nsource: x\n"), ""},
		{"atomic write not a power of two", write("aw2.yaml", "latency: {fsync: {p50: 1ms}}\natomic_write: 3000B\ndurability: synced\nsource: x\n"), `atomic_write "3000B" is not a power of two`},
		{"syncs at once without fsync", write("once4.yaml", "latency: {read: {p50: 1ms}}\nfsync_at_once: [{syncs: 2, p50: 2ms}]\ndurability: synced\nsource: x\n"), "without latency.fsync"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := Load(c.ref, dir)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if p.Latency.Fsync.P50 == 0 {
					t.Fatalf("no fsync latency read: %+v", p)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to say %q", err, c.want)
			}
		})
	}
	once, err := Load("once.yaml", dir)
	if err != nil || len(once.FsyncAtOnce) != 2 || once.FsyncAtOnce[1].Syncs != 8 || once.FsyncAtOnce[1].Tail() != 4*time.Millisecond {
		t.Fatalf("fsync_at_once read as %+v, %v", once.FsyncAtOnce, err)
	}
	data, err := once.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if back, err := Parse(data, ""); err != nil || len(back.FsyncAtOnce) != 2 || back.FsyncAtOnce[0] != once.FsyncAtOnce[0] {
		t.Fatalf("fsync_at_once does not round-trip: %v\n%s", err, data)
	}
	aw, err := Load("aw.yaml", dir)
	if err != nil || aw.AtomicWrite != 16<<10 {
		t.Fatalf("atomic_write read as %d, %v; want 16KiB", aw.AtomicWrite, err)
	}
	if data, err := aw.Marshal(); err != nil || !strings.Contains(string(data), "atomic_write: 16KiB") {
		t.Fatalf("atomic_write does not round-trip: %v\n%s", err, data)
	}
	p, err := Load("mine.yaml", dir)
	if err != nil || p.Name != "mine" || p.File != good || p.Latency.Fsync.Tail() != 5*time.Millisecond {
		t.Fatalf("file profile %+v, %v: want name mine from its file, its path, p99 5ms", p, err)
	}
}
