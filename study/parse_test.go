package study

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/tool"
	"github.com/tierbench/tierbench/workload"
)

// testCatalog stands in for the real catalog, whose engines and workloads
// are written elsewhere; it declares just enough to exercise validation.
type testCatalog struct{}

var pebbleSpec = engine.Spec{
	Name:          "pebble",
	MaxClients:    1024,
	MaxClientsWhy: "each client is a goroutine with its own histograms",
	Components:    []engine.Component{{Name: "data"}, {Name: "wal"}},
	Modes:         []engine.Mode{{Durability: engine.Sync}, {Durability: engine.NoSync}, {Durability: engine.NoWAL}},
	Options: []engine.Option{
		{Name: "cache", Kind: engine.KindSize},
		{Name: "memtable", Kind: engine.KindSize},
		{Name: "compactors", Kind: engine.KindInt},
		{Name: "verify", Kind: engine.KindBool},
		{Name: "compression", Kind: engine.KindString, Values: []string{"snappy", "zstd"}},
	},
}

var rocksSpec = engine.Spec{
	Name:       "rocks",
	Components: []engine.Component{{Name: "data"}},
	Modes:      []engine.Mode{{Durability: engine.Sync}},
	// rocks stands in for a server engine too.
	TargetSchemes: []string{"rocks"},
}

// ycsbSpec validates a few values the way a real workload's New would, so
// the test can see New's error reported on the workload line.
var ycsbSpec = workload.Spec{
	Name: "ycsb-a",
	Params: []workload.Param{
		{Name: "records"}, {Name: "fieldcount"}, {Name: "fieldlength"},
		{Name: "requestdistribution"}, {Name: "readproportion"},
	},
	New: func(params map[string]string) (workload.Workload, error) {
		if v, ok := params["records"]; ok {
			if n, err := strconv.Atoi(v); err != nil || n < 1 {
				return nil, fmt.Errorf("records must be >= 1, got %q", v)
			}
		}
		if v, ok := params["readproportion"]; ok {
			if f, err := strconv.ParseFloat(v, 64); err != nil || f < 0 || f > 1 {
				return nil, fmt.Errorf("readproportion must be between 0 and 1, got %q", v)
			}
		}
		w := sizedWorkload{bytes: 1000 * 1000} // records x 1000 bytes, as ycsb's default record
		if v, ok := params["records"]; ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			w.bytes = n * 1000
		}
		return w, nil
	},
}

// sizedWorkload stands in for a workload that estimates its data set
// (Sizer); validation calls nothing else on it.
type sizedWorkload struct {
	workload.Workload
	bytes int64
}

func (w sizedWorkload) EstimatedBytes() int64 { return w.bytes }

func (testCatalog) Engine(name string) (engine.Spec, bool) {
	switch name {
	case "pebble":
		return pebbleSpec, true
	case "rocks":
		return rocksSpec, true
	}
	return engine.Spec{}, false
}

func (testCatalog) EngineNames() []string { return []string{"rocks", "pebble"} }

func (testCatalog) Workload(name string) (workload.Spec, bool) {
	if name == "ycsb-a" {
		return ycsbSpec, true
	}
	return workload.Spec{}, false
}

func (testCatalog) WorkloadNames() []string { return []string{"ycsb-a"} }

// benchTool stands in for a standard tool that drives engine rocks only.
var benchTool = tool.Tool{Name: "bench", Check: func(eng, w string) error {
	if eng != "rocks" {
		return fmt.Errorf("driver bench drives engine rocks only")
	}
	return nil
}}

func (testCatalog) Tool(name string) (tool.Tool, bool) { return benchTool, name == "bench" }
func (testCatalog) ToolNames() []string                { return []string{"bench"} }

// example is the documented study; RAMDIR and DISKDIR become temp folders.
// Line numbers in the sad cases below refer to this text.
const example = `name: wal-placement-demo
engine: pebble
tiers:
  ram:  {path: RAMDIR}
  disk: {path: DISKDIR}
placements:
  all-disk: {data: disk, wal: disk}
  wal-ram:  {data: disk, wal: ram}
  all-ram:  {data: ram,  wal: ram}
baseline: all-disk
durability: [sync, nosync]
workload:
  name: ycsb-a
  records: 100000        # optional overrides: fieldcount, fieldlength, requestdistribution, readproportion, ...
clients: [1, 4, 16, 64]
warmup: 2s
duration: 5s
repeat: 1
# optional: target_rate: 20000   (total ops/s, open loop; arrival: constant | poisson)
`

// fixture makes the folders a study may point at and returns a function
// that fills the placeholders RAMDIR, DISKDIR and TMP in.
func fixture(t *testing.T) (fill func(string) string, ram, disk string) {
	t.Helper()
	tmp := t.TempDir()
	ram, disk = filepath.Join(tmp, "ram"), filepath.Join(tmp, "disk")
	for _, d := range []string{ram, disk} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, "afile"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(tmp, "readonly"), 0o555); err != nil {
		t.Fatal(err)
	}
	// Symlinks for the system-folder and same-folder cases.
	for link, to := range map[string]string{"etclink": "/etc", "ramlink": ram} {
		if err := os.Symlink(to, filepath.Join(tmp, link)); err != nil {
			t.Fatal(err)
		}
	}
	r := strings.NewReplacer("RAMDIR", ram, "DISKDIR", disk, "TMP", tmp)
	return r.Replace, ram, disk
}

// edit applies old->new replacement pairs, failing the test when an old
// text is absent so a stale case cannot pass vacuously.
func edit(t *testing.T, src string, pairs []string) string {
	t.Helper()
	if len(pairs)%2 != 0 {
		t.Fatalf("edits must be old,new pairs: %q", pairs)
	}
	for i := 0; i < len(pairs); i += 2 {
		if !strings.Contains(src, pairs[i]) {
			t.Fatalf("edit: %q not in study", pairs[i])
		}
		src = strings.Replace(src, pairs[i], pairs[i+1], 1)
	}
	return src
}

// lineOf returns the line (from 1) of the first line containing marker.
func lineOf(t *testing.T, src, marker string) int {
	t.Helper()
	for i, l := range strings.Split(src, "\n") {
		if strings.Contains(l, marker) {
			return i + 1
		}
	}
	t.Fatalf("marker %q not in study:\n%s", marker, src)
	return 0
}

func mustParse(t *testing.T, src string) *Study {
	t.Helper()
	s, err := Parse("study.yaml", []byte(src), testCatalog{})
	if err != nil {
		t.Fatalf("Parse failed:\n%v\nstudy:\n%s", err, src)
	}
	return s
}

func TestParseExample(t *testing.T) {
	fill, ram, disk := fixture(t)
	src := fill(example)
	s := mustParse(t, src)
	want := &Study{
		Name:   "wal-placement-demo",
		Engine: "pebble",
		Tiers:  []Tier{{Name: "ram", Path: ram, Line: 4}, {Name: "disk", Path: disk, Line: 5}},
		Placements: []Placement{
			{Name: "all-disk", Components: map[string]string{"data": "disk", "wal": "disk"}},
			{Name: "wal-ram", Components: map[string]string{"data": "disk", "wal": "ram"}},
			{Name: "all-ram", Components: map[string]string{"data": "ram", "wal": "ram"}},
		},
		Baseline:      "all-disk",
		Durability:    []engine.Durability{engine.Sync, engine.NoSync},
		Workload:      Workload{Name: "ycsb-a", Params: map[string]string{"records": "100000"}, EstimatedBytes: 100000 * 1000},
		Clients:       []int{1, 4, 16, 64},
		Warmup:        2 * time.Second,
		Duration:      5 * time.Second,
		Repeat:        1,
		Arrival:       "constant",
		Probe:         ProbeCached,
		Cache:         CacheWarm,
		Options:       map[string]string{},
		Source:        src,
		Drivers:       []string{"builtin"},
		File:          "study.yaml",
		DataComponent: "data",
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("Parse(example) =\n%+v\nwant\n%+v", s, want)
	}
}

// TestParseVariants covers the optional and convenience forms.
func TestParseVariants(t *testing.T) {
	fill, _, _ := fixture(t)
	cases := []struct {
		name  string
		edits []string
		check func(t *testing.T, s *Study)
	}{
		{"defaults when warmup and repeat are absent",
			[]string{"warmup: 2s\n", "", "repeat: 1\n", ""},
			func(t *testing.T, s *Study) {
				if s.Warmup != 0 || s.Repeat != 1 || s.TargetRate != 0 || s.Arrival != "constant" {
					t.Errorf("warmup=%v repeat=%d rate=%v arrival=%q", s.Warmup, s.Repeat, s.TargetRate, s.Arrival)
				}
			}},
		{"zero warmup is allowed",
			[]string{"warmup: 2s", "warmup: 0s"},
			func(t *testing.T, s *Study) {
				if s.Warmup != 0 {
					t.Errorf("warmup = %v", s.Warmup)
				}
			}},
		{"single durability and clients scalars",
			[]string{"durability: [sync, nosync]", "durability: nowal", "clients: [1, 4, 16, 64]", "clients: 8"},
			func(t *testing.T, s *Study) {
				if !reflect.DeepEqual(s.Durability, []engine.Durability{engine.NoWAL}) || !reflect.DeepEqual(s.Clients, []int{8}) {
					t.Errorf("durability=%v clients=%v", s.Durability, s.Clients)
				}
			}},
		{"open loop with poisson arrivals",
			[]string{"repeat: 1\n", "repeat: 3\ntarget_rate: 2500.5\narrival: poisson\n"},
			func(t *testing.T, s *Study) {
				if s.TargetRate != 2500.5 || s.Arrival != "poisson" || s.Repeat != 3 {
					t.Errorf("rate=%v arrival=%q repeat=%d", s.TargetRate, s.Arrival, s.Repeat)
				}
			}},
		{"options are normalised by kind",
			[]string{"repeat: 1\n", "repeat: 1\noptions:\n  cache: 64MiB\n  memtable: 1GB\n  compactors: 4\n  verify: TRUE\n"},
			func(t *testing.T, s *Study) {
				want := map[string]string{"cache": "67108864", "memtable": "1000000000", "compactors": "4", "verify": "true"}
				if !reflect.DeepEqual(s.Options, want) {
					t.Errorf("options = %v, want %v", s.Options, want)
				}
			}},
		{"workload params keep only overrides, as strings",
			[]string{"  records: 100000", "  records: 100000\n  readproportion: 0.95\n  requestdistribution: zipfian"},
			func(t *testing.T, s *Study) {
				want := map[string]string{"records": "100000", "readproportion": "0.95", "requestdistribution": "zipfian"}
				if !reflect.DeepEqual(s.Workload.Params, want) {
					t.Errorf("params = %v, want %v", s.Workload.Params, want)
				}
			}},
		{"merge keys and aliases",
			[]string{
				"  all-disk: {data: disk, wal: disk}", "  all-disk: &base {data: disk, wal: disk}",
				"  wal-ram:  {data: disk, wal: ram}", "  wal-ram:  {<<: *base, wal: ram}",
			},
			func(t *testing.T, s *Study) {
				if got := s.Placements[1].Components; !reflect.DeepEqual(got, map[string]string{"data": "disk", "wal": "ram"}) {
					t.Errorf("wal-ram = %v", got)
				}
			}},
		{"a placement that pins its durability",
			[]string{"  all-ram:  {data: ram,  wal: ram}", "  all-ram:  {data: ram,  wal: ram, durability: nowal}"},
			func(t *testing.T, s *Study) {
				p := s.Placements[2]
				if p.Durability != engine.NoWAL || len(p.Components) != 2 || p.DurabilityIn(engine.Sync) != engine.NoWAL ||
					s.Placements[0].DurabilityIn(engine.Sync) != engine.Sync {
					t.Errorf("placement %+v", p)
				}
			}},
		{"driver list is an axis of the matrix",
			[]string{"repeat: 1\n", "repeat: 1\ndriver: [builtin]\n"},
			func(t *testing.T, s *Study) {
				if !reflect.DeepEqual(s.Drivers, []string{"builtin"}) || s.Matrix()[0].Driver != "builtin" {
					t.Errorf("drivers = %v", s.Drivers)
				}
			}},
		{"target without tiers or placements",
			[]string{"engine: pebble", "engine: rocks\ntarget: rocks://u:secret@127.0.0.1:5432/db",
				"tiers:\n  ram:  {path: RAMDIR}\n  disk: {path: DISKDIR}\n", "",
				"placements:\n  all-disk: {data: disk, wal: disk}\n  wal-ram:  {data: disk, wal: ram}\n  all-ram:  {data: ram,  wal: ram}\nbaseline: all-disk\ndurability: [sync, nosync]\n", ""},
			func(t *testing.T, s *Study) {
				if s.Target == "" || len(s.Placements) != 1 || s.Placements[0].Name != TargetPlacement || s.Baseline != TargetPlacement ||
					!reflect.DeepEqual(s.Durability, []engine.Durability{AsConfigured}) || len(s.Tiers) != 0 {
					t.Errorf("target=%q placements=%v baseline=%q durability=%v", s.Target, s.Placements, s.Baseline, s.Durability)
				}
			}},
		{"placements keep declaration order",
			[]string{"  all-disk: {data: disk, wal: disk}\n", "", "  all-ram:  {data: ram,  wal: ram}\n", "  all-ram:  {data: ram,  wal: ram}\n  all-disk: {data: disk, wal: disk}\n"},
			func(t *testing.T, s *Study) {
				var names []string
				for _, p := range s.Placements {
					names = append(names, p.Name)
				}
				if !reflect.DeepEqual(names, []string{"wal-ram", "all-ram", "all-disk"}) {
					t.Errorf("placements = %v", names)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.check(t, mustParse(t, fill(edit(t, example, c.edits))))
		})
	}
}

// TestParseProblems checks that each mistake is reported with the expected
// fragment at the expected line. Lines are given by a marker text (the line
// of the final study that contains it) or by number.
func TestParseProblems(t *testing.T) {
	cases := []struct {
		name  string
		edits []string // old,new pairs applied to example
		src   string   // whole study instead of an edited example
		want  string
		at    string // marker of the expected line
		line  int    // expected line when there is no marker
		count int    // exact number of problems, when it matters
		root  bool   // skip as root, which may write anywhere
	}{
		{name: "string option outside its values", edits: []string{"repeat: 1", "repeat: 1\noptions: {compression: lz4}"},
			want: `option compression "lz4" is not one of its values; use one of them (values: snappy, zstd)`, at: "compression", count: 1},
		// drivers and targets
		{name: "options on a target", src: "name: t\nengine: rocks\ntarget: rocks://127.0.0.1:1/x\nworkload: {name: ycsb-a}\nclients: 1\nduration: 1s\noptions: {cache: 1MiB}\n",
			want: "with target, tierbench configures nothing on your server; remove options", at: "options:"},
		{name: "placement durability the engine lacks", edits: []string{"  all-ram:  {data: ram,  wal: ram}", "  all-ram:  {durability: memory}"},
			want: `durability "memory" of placement "all-ram" is not supported by engine pebble`, at: "all-ram:  {", count: 1},
		{name: "unknown driver", edits: []string{"repeat: 1", "repeat: 1\ndriver: [builtin, pgbnch]"},
			want: `unknown driver "pgbnch"`, at: "driver:", count: 1},
		{name: "driver that cannot drive the engine", edits: []string{"repeat: 1", "repeat: 1\ndriver: bench"},
			want: "driver bench drives engine rocks only; remove bench from driver or change the study", at: "driver:", count: 1},
		{name: "driver listed twice", edits: []string{"repeat: 1", "repeat: 1\ndriver: [builtin, builtin]"},
			want: `driver "builtin" is listed twice`, at: "driver:", count: 1},
		{name: "target on an embedded engine", edits: []string{"repeat: 1", "repeat: 1\ntarget: postgres://127.0.0.1:5432/db"},
			want: "engine pebble runs inside tierbench and cannot be a target", at: "target:", count: 1},
		{name: "target that is not a URL", edits: []string{"repeat: 1", "repeat: 1\ntarget: localhost"},
			want: `target "localhost" is not a server URL`, at: "target:", count: 1},
		// bad input that run used to accept (issue 11)
		{name: "tier name that is a path", edits: []string{"tiers:\n", "tiers:\n  ../../../../tmp/x: {tmpfs: {size: 1GiB}}\n"},
			want: `tier name "../../../../tmp/x" is not an identifier: use letters, digits, - and _`, at: "../../../../tmp/x", count: 1},
		{name: "tier name with a slash", edits: []string{"tiers:\n", "tiers:\n  a/b: {path: TMP/ab}\n"},
			want: `tier name "a/b" is not an identifier`, at: "a/b:", count: 1},
		{name: "tier on the root folder", edits: []string{"{path: DISKDIR}", "{path: /}"},
			want: "path / is the root folder, not a place for a tier", at: "disk: {", count: 1},
		{name: "tier on /etc", edits: []string{"{path: DISKDIR}", "{path: /etc}"},
			want: "path /etc is a system folder (/etc)", at: "disk: {", count: 1},
		{name: "tier below /usr", edits: []string{"{path: DISKDIR}", "{path: /usr/local/tierbench}"},
			want: "is a system folder (/usr)", at: "disk: {", count: 1},
		{name: "tier on /proc", edits: []string{"{path: DISKDIR}", "{path: /proc}"},
			want: "path /proc is a system folder (/proc)", at: "disk: {", count: 1},
		{name: "tier on /sys", edits: []string{"{path: DISKDIR}", "{path: /sys/kernel}"},
			want: "is a system folder (/sys)", at: "disk: {", count: 1},
		{name: "tier in /dev", edits: []string{"{path: DISKDIR}", "{path: /dev/tierbench}"},
			want: "is a system folder (/dev)", at: "disk: {", count: 1},
		{name: "tier that is a symlink to /etc", edits: []string{"{path: DISKDIR}", "{path: TMP/etclink}"},
			want: "etclink (a symlink to /etc) is a system folder (/etc)", at: "disk: {", count: 1},
		{name: "two tiers on one folder", edits: []string{"{path: DISKDIR}", "{path: RAMDIR}"},
			want: `tier "disk" is the same folder as tier "ram"`, at: "disk: {", count: 1},
		{name: "two tiers on one folder through a symlink", edits: []string{"{path: DISKDIR}", "{path: TMP/ramlink}"},
			want: `tier "disk" is the same folder as tier "ram"`, at: "disk: {", count: 1},
		{name: "two pmem tiers on one device", edits: []string{"tiers:\n", "tiers:\n  p1: {pmem: {device: /dev/pmem0}}\n  p2: {pmem: {device: /dev/pmem0}}\n"},
			want: `tier "p2" uses the same device as tier "p1" (/dev/pmem0)`, at: "p2:", count: 1},
		{name: "clients above the engine's bound", edits: []string{"clients: [1, 4, 16, 64]", "clients: [1, 100000000]"},
			want: "clients 100000000 is more than engine pebble takes (at most 1024): each client is a goroutine with its own histograms; use at most 1024 clients", at: "clients:", count: 1},
		{name: "tmpfs tier smaller than the data on it", edits: []string{"ram:  {path: RAMDIR}", "ram:  {tmpfs: {size: 1KiB}}"},
			want: `tier "ram" (tmpfs, 1.0 KiB) is smaller than the data placement "all-ram" puts on it: workload ycsb-a loads at least 95 MiB; make the tier at least 95 MiB`, at: "ram:  {", count: 1},
		{name: "loop tier smaller than the data on it", edits: []string{"disk: {path: DISKDIR}", "disk: {loop: {backing: disk, size: 64MiB}}"},
			want: `tier "disk" (loop, 64 MiB) is smaller than the data placement "all-disk" puts on it`, at: "disk: {", count: 1},
		{name: "target URL error alone", src: "name: t\nengine: rocks\ntarget: localhost\nworkload: {name: ycsb-a}\nclients: 1\nduration: 1s\n",
			want: `target "localhost" is not a server URL`, at: "target:", count: 1},
		// keys
		{name: "typo in top-level key", edits: []string{"duration: 5s", "duraton: 5s"},
			want: `unknown key "duraton"; did you mean "duration"? (known keys: name, engine,`, at: "duraton", count: 1},
		{name: "unrelated top-level key", edits: []string{"repeat: 1", "repeat: 1\ncolour: red"},
			want: `unknown key "colour"; remove it (known keys:`, at: "colour"},
		{name: "missing required key reported at line 1", edits: []string{"duration: 5s\n", ""},
			want: `missing required key "duration"; add duration:`, line: 1, count: 1},
		{name: "missing baseline", edits: []string{"baseline: all-disk\n", ""},
			want: `missing required key "baseline"; add baseline: <placement>, the placement the others are compared with, one of: all-disk, wal-ram, all-ram`, line: 1},
		{name: "required key without value", edits: []string{"duration: 5s", "duration:"},
			want: `duration has no value`, at: "duration:"},
		{name: "duplicate top-level key", edits: []string{"repeat: 1", "repeat: 1\nduration: 6s"},
			want: `duplicate key "duration" in the study (first at line 17); remove or rename one`, at: "duration: 6s"},
		{name: "wrong kind for name", edits: []string{"name: wal-placement-demo", "name: [a, b]"},
			want: `name must be a single value, not a list`, line: 1},
		{name: "study is a list", src: "- name: x\n",
			want: `the study must be a mapping of key: value pairs, not a list`, line: 1},
		{name: "empty file", src: "# nothing yet\n", want: `study file is empty`, line: 1},
		{name: "two documents", edits: []string{"repeat: 1\n", "repeat: 1\n---\nname: other\n"},
			want: `a second YAML document starts here`, at: "---"},

		// syntax
		{name: "syntax error: unclosed list", edits: []string{"clients: [1, 4, 16, 64]", "clients: [1, 4, 16, 64"},
			want: `YAML syntax error: did not find expected ',' or ']'`, at: "clients:"},
		{name: "syntax error: tab indentation", edits: []string{"  name: ycsb-a", "\tname: ycsb-a"},
			want: `YAML syntax error: found character that cannot start any token; indent with spaces, not tabs`, at: "\tname"},
		{name: "syntax error: bad indentation", edits: []string{"  name: ycsb-a", "   name: ycsb-a"},
			want: `YAML syntax error: did not find expected key`, at: "records"},
		{name: "syntax error: list item in a mapping", edits: []string{"repeat: 1", "repeat: 1\n- oops"},
			want: `YAML syntax error: did not find expected key`, at: "- oops"},
		{name: "syntax error: unclosed quote", edits: []string{"name: wal-placement-demo", `name: "wal-placement-demo`},
			want: `YAML syntax error: found unexpected end of stream`, line: 20},
		{name: "syntax error: control character", edits: []string{"duration: 5s", "duration: 5s\x01"},
			want: `YAML syntax error: control characters are not allowed`, at: "\x01"},

		// engine
		{name: "engine typo", edits: []string{"engine: pebble", "engine: pebbel"},
			want: `unknown engine "pebbel"; did you mean "pebble"? (known engines: pebble, rocks)`, at: "engine:", count: 1},
		{name: "unknown engine", edits: []string{"engine: pebble", "engine: leveldb"},
			want: `unknown engine "leveldb"; use a known engine (known engines: pebble, rocks)`, at: "engine:"},

		// tiers
		{name: "relative tier path", edits: []string{"{path: RAMDIR}", "{path: tierbench}"},
			want: `tier "ram": path "tierbench" is not absolute`, at: "ram:"},
		{name: "tier parent does not exist", edits: []string{"{path: DISKDIR}", "{path: TMP/missing/child}"},
			want: `tier "disk": cannot create`, at: "disk:"},
		{name: "tier path is a file", edits: []string{"{path: DISKDIR}", "{path: TMP/afile}"},
			want: `is a file, not a folder`, at: "disk:"},
		{name: "tier not writable", edits: []string{"{path: DISKDIR}", "{path: TMP/readonly}"},
			want: `is not writable`, at: "disk:", root: true},
		{name: "typo in tier key", edits: []string{"{path: RAMDIR}", "{pth: RAMDIR}"},
			want: `unknown key "pth" in tier "ram"; did you mean "path"? (known keys: path, tmpfs, loop, pmem, latency, throttle)`, at: "ram:"},
		{name: "unknown probe mode", edits: []string{"repeat: 1", "repeat: 1\nprobe: fast"},
			want: `unknown probe "fast"`, at: "probe:"},
		{name: "cold cache with warmup", edits: []string{"repeat: 1", "repeat: 1\ncache: cold"},
			want: `cache: cold measures from a cold start`, at: "cache:"},
		{name: "throttle needs a loop tier", edits: []string{"{path: RAMDIR}", "{path: RAMDIR, throttle: {write_iops: 100}}"},
			want: `throttle needs a loop tier`, at: "ram:"},
		{name: "bad latency", edits: []string{"{path: RAMDIR}", "{path: RAMDIR, latency: {fsync: slow}}"},
			want: `latency fsync "slow" is not a duration`, at: "ram:"},
		{name: "empty latency", edits: []string{"{path: RAMDIR}", "{path: RAMDIR, latency: {}}"},
			want: `latency sets nothing`, at: "ram:"},
		{name: "bad throttle", edits: []string{"{path: RAMDIR}", "{loop: {size: 1G}, throttle: {write_iops: -5}}"},
			want: `throttle write_iops "-5" must be a positive number`, at: "ram:"},
		{name: "pmem without device", edits: []string{"{path: RAMDIR}", "{pmem: {fs: xfs}}"},
			want: `pmem has no device`, at: "ram:"},
		{name: "tier without path", edits: []string{"{path: RAMDIR}", "{}"},
			want: `tier "ram" has no path; add path: /absolute/folder`, at: "ram:"},
		{name: "tier with two kinds", edits: []string{"{path: RAMDIR}", "{path: RAMDIR, tmpfs: {size: 1G}}"},
			want: `tier "ram" has both path and tmpfs`, at: "ram:"},
		{name: "tmpfs without size", edits: []string{"{path: RAMDIR}", "{tmpfs: {}}"},
			want: `tier "ram" tmpfs has no size`, at: "ram:"},
		{name: "tmpfs bad size", edits: []string{"{path: RAMDIR}", "{tmpfs: {size: lots}}"},
			want: `size "lots" is not a positive size`, at: "ram:"},
		{name: "tmpfs unknown key", edits: []string{"{path: RAMDIR}", "{tmpfs: {size: 1G, sise: 2G}}"},
			want: `unknown key "sise" in tier "ram" tmpfs; did you mean "size"?`, at: "ram:"},
		{name: "loop bad backing", edits: []string{"{path: RAMDIR}", "{loop: {backing: nvram, size: 1G}}"},
			want: `backing "nvram" must be ram or disk`, at: "ram:"},
		{name: "loop bad fs", edits: []string{"{path: RAMDIR}", "{loop: {backing: ram, size: 1G, fs: zfs}}"},
			want: `fs "zfs" is not supported; use ext4 or xfs`, at: "ram:"},
		{name: "tier given as plain path", edits: []string{"ram:  {path: RAMDIR}", "ram: /dev/shm/tierbench"},
			want: `tier "ram" must be a mapping with a path, not a plain value; write ram: {path: /dev/shm/tierbench}`, at: "ram:"},
		{name: "duplicate tier", edits: []string{"  disk: {path: DISKDIR}", "  disk: {path: DISKDIR}\n  ram: {path: DISKDIR}"},
			want: `duplicate key "ram" in tiers (first at line 4)`, line: 6},
		{name: "empty tiers", edits: []string{"tiers:\n  ram:  {path: RAMDIR}\n  disk: {path: DISKDIR}", "tiers: {}"},
			want: `tiers is empty; declare at least one tier`, at: "tiers:"},

		// placements
		{name: "unknown tier in placement", edits: []string{"wal-ram:  {data: disk, wal: ram}", "wal-ram:  {data: disk, wal: rma}"},
			want: `placement "wal-ram" puts wal on unknown tier "rma"; did you mean "ram"? (declared tiers: ram, disk)`, at: "wal-ram:", count: 1},
		{name: "unknown component", edits: []string{"wal-ram:  {data: disk, wal: ram}", "wal-ram:  {data: disk, wall: ram}"},
			want: `unknown component "wall" in placement "wal-ram"; did you mean "wal"? (components of engine pebble: data, wal)`, at: "wal-ram:", count: 1},
		{name: "placement missing a component", edits: []string{"wal-ram:  {data: disk, wal: ram}", "wal-ram:  {data: disk}"},
			want: `placement "wal-ram" does not place component "wal"; add wal: <tier>`, at: "wal-ram:", count: 1},
		{name: "placement without value", edits: []string{"all-ram:  {data: ram,  wal: ram}", "all-ram:"},
			want: `placement "all-ram" has no value`, at: "all-ram:"},
		{name: "empty placements", edits: []string{"placements:\n  all-disk: {data: disk, wal: disk}\n  wal-ram:  {data: disk, wal: ram}\n  all-ram:  {data: ram,  wal: ram}", "placements: {}"},
			want: `placements is empty; declare at least one placement, e.g. all-ram: {data: ram, wal: ram}`, at: "placements:"},
		{name: "duplicate placement", edits: []string{"all-ram:  {data: ram,  wal: ram}", "all-disk: {data: ram,  wal: ram}"},
			want: `duplicate key "all-disk" in placements (first at line 7)`, line: 9},
		{name: "baseline not a placement", edits: []string{"baseline: all-disk", "baseline: all-dsk"},
			want: `baseline "all-dsk" is not a placement; did you mean "all-disk"? (declared placements: all-disk, wal-ram, all-ram)`, at: "baseline:"},

		// durability
		{name: "unsupported durability", edits: []string{"[sync, nosync]", "[sync, fsync]"},
			want: `durability "fsync" is not supported by engine pebble; did you mean "sync"? (supported: sync, nosync, nowal)`, at: "durability:"},
		{name: "unsupported durability on its own line", edits: []string{"durability: [sync, nosync]", "durability:\n  - sync\n  - async"},
			want: `durability "async" is not supported by engine pebble`, at: "- async"},
		{name: "duplicate durability", edits: []string{"[sync, nosync]", "[sync, sync]"},
			want: `durability "sync" is listed twice (first at line 11); remove one`, at: "durability:"},
		{name: "empty durability", edits: []string{"[sync, nosync]", "[]"},
			want: `durability is empty`, at: "durability:"},

		// workload
		{name: "unknown workload", edits: []string{"name: ycsb-a", "name: tpcc"},
			want: `unknown workload "tpcc"; use a known workload (known workloads: ycsb-a)`, at: "name: tpcc"},
		{name: "unknown workload param", edits: []string{"  records: 100000", "  recrods: 100000"},
			want: `unknown parameter "recrods" for workload ycsb-a; did you mean "records"?`, at: "recrods"},
		{name: "records zero is reported once", edits: []string{"records: 100000", "records: 0"},
			want: `records must be a whole number >= 1, got "0"`, at: "records:", count: 1},
		{name: "records not a number", edits: []string{"records: 100000", "records: lots"},
			want: `records must be a whole number >= 1, got "lots"`, at: "records:", count: 1},
		{name: "workload New error on the workload line", edits: []string{"  records: 100000", "  records: 100000\n  readproportion: 1.5"},
			want: `workload ycsb-a: readproportion must be between 0 and 1, got "1.5"`, at: "workload:", count: 1},
		{name: "workload without name", edits: []string{"  name: ycsb-a\n", ""},
			want: `workload has no name; add name: <workload>, one of: ycsb-a`, at: "workload:"},
		{name: "workload as plain value", edits: []string{"workload:\n  name: ycsb-a\n  records: 100000", "workload: ycsb-a"},
			want: `workload must be a mapping with a name and optional overrides, not a plain value; write workload: {name: ycsb-a}`, at: "workload:"},
		{name: "workload param given a list", edits: []string{"records: 100000", "records: [1, 2]"},
			want: `records must be a single value, not a list`, at: "records:"},

		// clients
		{name: "clients not a number", edits: []string{"clients: [1, 4, 16, 64]", `clients: "many"`},
			want: `clients "many" is not a whole number`, at: "clients:"},
		{name: "clients a mapping", edits: []string{"clients: [1, 4, 16, 64]", `clients: {a: 1}`},
			want: `clients must be a single value or a list, not a mapping`, at: "clients:"},
		{name: "zero clients", edits: []string{"clients: [1, 4, 16, 64]", "clients: [0, 4]"},
			want: `clients must be >= 1, got 0`, at: "clients:"},
		{name: "negative clients", edits: []string{"clients: [1, 4, 16, 64]", "clients: -2"},
			want: `clients must be >= 1, got -2`, at: "clients:"},
		{name: "duplicate clients", edits: []string{"clients: [1, 4, 16, 64]", "clients: [1, 4, 4]"},
			want: `clients 4 is listed twice (first at line 15); remove one`, at: "clients:"},
		{name: "empty clients", edits: []string{"clients: [1, 4, 16, 64]", "clients: []"},
			want: `clients is empty`, at: "clients:"},

		// timing
		{name: "zero duration", edits: []string{"duration: 5s", "duration: 0s"},
			want: `duration must be more than 0, got 0s`, at: "duration:"},
		{name: "negative duration", edits: []string{"duration: 5s", "duration: -5s"},
			want: `duration must be more than 0, got -5s`, at: "duration:"},
		{name: "duration without unit", edits: []string{"duration: 5s", "duration: 5"},
			want: `duration "5" has no unit; write 5s for seconds`, at: "duration:"},
		{name: "duration not a duration", edits: []string{"duration: 5s", "duration: soon"},
			want: `duration "soon" is not a duration`, at: "duration:"},
		{name: "negative warmup", edits: []string{"warmup: 2s", "warmup: -1s"},
			want: `warmup must not be negative, got -1s`, at: "warmup:"},
		{name: "zero repeat", edits: []string{"repeat: 1", "repeat: 0"},
			want: `repeat must be >= 1, got 0`, at: "repeat:"},
		{name: "repeat not a number", edits: []string{"repeat: 1", "repeat: twice"},
			want: `repeat "twice" is not a whole number`, at: "repeat:"},

		// open loop
		{name: "zero target_rate", edits: []string{"repeat: 1", "repeat: 1\ntarget_rate: 0"},
			want: `target_rate must be more than 0, got 0`, at: "target_rate:"},
		{name: "negative target_rate", edits: []string{"repeat: 1", "repeat: 1\ntarget_rate: -10"},
			want: `target_rate must be more than 0, got -10`, at: "target_rate:"},
		{name: "target_rate not a number", edits: []string{"repeat: 1", "repeat: 1\ntarget_rate: fast"},
			want: `target_rate "fast" is not a number`, at: "target_rate:"},
		{name: "arrival without target_rate", edits: []string{"repeat: 1", "repeat: 1\narrival: poisson"},
			want: `arrival only applies in open loop, with target_rate; add target_rate`, at: "arrival:", count: 1},
		{name: "unknown arrival", edits: []string{"repeat: 1", "repeat: 1\ntarget_rate: 100\narrival: poison"},
			want: `unknown arrival "poison"; did you mean "poisson"? (known arrivals: constant, poisson)`, at: "arrival:"},

		// options
		{name: "unknown option", edits: []string{"repeat: 1", "repeat: 1\noptions:\n  cach: 64MiB"},
			want: `unknown option "cach" for engine pebble; did you mean "cache"? (known options: cache, compactors, compression, memtable, verify)`, at: "cach:"},
		{name: "bad size option", edits: []string{"repeat: 1", "repeat: 1\noptions:\n  cache: lots"},
			want: `option cache "lots" is not a size`, at: "cache:"},
		{name: "zero size option", edits: []string{"repeat: 1", "repeat: 1\noptions:\n  memtable: 0MiB"},
			want: `option memtable must be more than 0 bytes`, at: "memtable:"},
		{name: "bad int option", edits: []string{"repeat: 1", "repeat: 1\noptions:\n  compactors: 2.5"},
			want: `option compactors "2.5" is not a whole number`, at: "compactors:"},
		{name: "bad bool option", edits: []string{"repeat: 1", "repeat: 1\noptions:\n  verify: maybe"},
			want: `option verify "maybe" is not true or false`, at: "verify:"},
		{name: "options not a mapping", edits: []string{"repeat: 1", "repeat: 1\noptions: [cache]"},
			want: `options must be a mapping of key: value pairs, not a list`, at: "options:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.root && os.Geteuid() == 0 {
				t.Skip("root may write to read-only folders")
			}
			fill, _, _ := fixture(t)
			src := c.src
			if src == "" {
				src = edit(t, example, c.edits)
			}
			src = fill(src)
			line := c.line
			if c.at != "" {
				line = lineOf(t, src, c.at)
			}
			_, err := Parse("study.yaml", []byte(src), testCatalog{})
			var ps Problems
			if !errors.As(err, &ps) {
				t.Fatalf("Parse returned %v, want Problems", err)
			}
			found := false
			for _, p := range ps {
				if p.Line == line && strings.Contains(p.Msg, c.want) {
					found = true
				}
			}
			if !found {
				t.Errorf("no problem at line %d containing\n  %s\ngot:\n%v", line, c.want, err)
			}
			if c.count > 0 && len(ps) != c.count {
				t.Errorf("got %d problems, want %d:\n%v", len(ps), c.count, err)
			}
			for _, p := range ps {
				if p.File != "study.yaml" {
					t.Errorf("problem %q has file %q", p.Msg, p.File)
				}
			}
		})
	}
}

// TestParseAllProblems checks that problems are collected rather than the
// first one stopping the parse, and come out sorted by line in the
// FILE:LINE: form.
func TestParseAllProblems(t *testing.T) {
	fill, _, _ := fixture(t)
	src := fill(edit(t, example, []string{
		"engine: pebble", "engine: pebble\ncolour: red",
		"wal-ram:  {data: disk, wal: ram}", "wal-ram:  {data: disk}",
		"[sync, nosync]", "[sync, fsync]",
		"clients: [1, 4, 16, 64]", "clients: [1, 0]",
		"duration: 5s", "duration: 0s",
	}))
	_, err := Parse("study.yaml", []byte(src), testCatalog{})
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("Parse returned %v, want Problems", err)
	}
	want := []string{
		`study.yaml:3: unknown key "colour"`,
		`study.yaml:9: placement "wal-ram" does not place component "wal"`,
		`study.yaml:12: durability "fsync" is not supported`,
		`study.yaml:16: clients must be >= 1`,
		`study.yaml:18: duration must be more than 0`,
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%v", len(lines), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("problem %d = %q, want prefix %q", i, lines[i], w)
		}
	}
}

// TestParseUnknownEngineQuiet checks that an unknown engine does not also
// bring complaints about components, modes and options it would have
// declared.
func TestParseUnknownEngineQuiet(t *testing.T) {
	fill, _, _ := fixture(t)
	src := fill(edit(t, example, []string{"engine: pebble", "engine: pebbel", "repeat: 1", "repeat: 1\noptions: {cache: 1MiB}"}))
	_, err := Parse("study.yaml", []byte(src), testCatalog{})
	var ps Problems
	if !errors.As(err, &ps) || len(ps) != 1 {
		t.Fatalf("want exactly one problem, got %v", err)
	}
}

func TestParseFile(t *testing.T) {
	fill, _, _ := fixture(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "study.yaml")
	if err := os.WriteFile(path, []byte(fill(example)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseFile(path, testCatalog{}); err != nil {
		t.Fatalf("ParseFile: %v", err)
	}

	missing := filepath.Join(dir, "nope.yaml")
	_, err := ParseFile(missing, testCatalog{})
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("ParseFile(missing) = %v, want Problems", err)
	}
	if want := "cannot read study file " + missing + ": no such file or directory"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error = %q, want prefix %q", err, want)
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: x\nduraton: 5s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ParseFile(bad, testCatalog{})
	if !strings.Contains(err.Error(), bad+`:2: unknown key "duraton"; did you mean "duration"?`) {
		t.Errorf("problems should name the file and line:\n%v", err)
	}
}

func TestMatrix(t *testing.T) {
	fill, _, _ := fixture(t)
	s := mustParse(t, fill(edit(t, example, []string{"repeat: 1", "repeat: 2"})))
	cells := s.Matrix()
	nP, nD, nC, nR := len(s.Placements), len(s.Durability), len(s.Clients), s.Repeat
	if want := nP * nD * nC * nR; len(cells) != want || want != 3*2*4*2 {
		t.Fatalf("got %d cells, want %d", len(cells), want)
	}
	for i, c := range cells {
		// Placements vary fastest, then clients, then durability; repeats slowest.
		p := s.Placements[i%nP]
		cl := s.Clients[(i/nP)%nC]
		d := s.Durability[(i/(nP*nC))%nD]
		r := i/(nP*nC*nD) + 1
		if c.Seq != i+1 || c.Placement.Name != p.Name || c.Clients != cl || c.Durability != d || c.Repeat != r {
			t.Errorf("cell %d = {seq %d %s %s clients=%d repeat=%d}, want {seq %d %s %s clients=%d repeat=%d}",
				i, c.Seq, c.Placement.Name, c.Durability, c.Clients, c.Repeat, i+1, p.Name, d, cl, r)
		}
	}
}

func TestSuggest(t *testing.T) {
	known := []string{"duration", "durability", "records", "path"}
	for name, want := range map[string]string{
		"duraton":  "duration",
		"recrods":  "records",
		"Duration": "duration",
		"pth":      "path",
		"colour":   "",
		"x":        "",
	} {
		if got := suggest(name, known); got != want {
			t.Errorf("suggest(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestProvisionedTiers(t *testing.T) {
	src := `name: prov
engine: pebble
tiers:
  ram:  {tmpfs: {size: 512MiB}}
  pm:   {loop: {backing: ram, size: 1GiB, fs: ext4, mount_options: "noatime"}}
  disk: {loop: {size: 2G}, throttle: {write_iops: 500, write_bps: 10MiB}, latency: {fsync: 2ms, write: 100us}}
  nv:   {pmem: {device: /dev/pmem0, dax: true}}
placements:
  a: {data: disk, wal: pm}
  b: {data: ram, wal: ram}
baseline: a
durability: sync
workload: {name: ycsb-a}
clients: 1
duration: 1s
`
	st, err := Parse("study.yaml", []byte(src), testCatalog{})
	if err != nil {
		t.Fatal(err)
	}
	ram, _ := st.Tier("ram")
	pm, _ := st.Tier("pm")
	disk, _ := st.Tier("disk")
	if ram.Tmpfs == nil || ram.Tmpfs.Size != 512<<20 || !ram.Provisioned() || ram.Path != "" {
		t.Errorf("ram: %+v", ram)
	}
	if pm.Loop == nil || *pm.Loop != (tier.LoopSpec{Backing: "ram", Size: 1 << 30, FS: "ext4", MountOptions: "noatime"}) {
		t.Errorf("pm: %+v", pm.Loop)
	}
	if disk.Loop == nil || disk.Loop.Backing != "disk" || disk.Loop.FS != "ext4" || disk.Loop.Size != 2e9 {
		t.Errorf("disk defaults: %+v", disk.Loop)
	}
	if disk.Throttle == nil || *disk.Throttle != (tier.ThrottleSpec{WriteIOPS: 500, WriteBPS: 10 << 20}) {
		t.Errorf("disk throttle: %+v", disk.Throttle)
	}
	if disk.Latency == nil || *disk.Latency != (tier.LatencySpec{Fsync: 2 * time.Millisecond, Write: 100 * time.Microsecond}) {
		t.Errorf("disk latency: %+v", disk.Latency)
	}
	if nv, _ := st.Tier("nv"); nv.Pmem == nil || *nv.Pmem != (tier.PmemSpec{Device: "/dev/pmem0", FS: "xfs", DAX: true}) {
		t.Errorf("nv: %+v", nv.Pmem)
	}
}
