package study

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/ceph"
	"github.com/tierbench/tierbench/engine/ceph/rbdtier"
	"github.com/tierbench/tierbench/setting"
	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/tool"
	"github.com/tierbench/tierbench/workload"
)

// testCatalog stands in for the real catalog, whose engines and workloads
// are written elsewhere; it declares just enough to exercise validation.
type testCatalog struct{}

var pebbleSpec = engine.Spec{
	Name:          "pebble",
	InProcess:     true,
	Crashable:     true,
	MaxClients:    1024,
	MaxClientsWhy: "each client is a goroutine with its own histograms",
	Components:    []engine.Component{{Name: "data"}, {Name: "wal"}},
	Modes:         []engine.Mode{{Durability: engine.Sync}, {Durability: engine.NoSync}, {Durability: engine.NoWAL}},
	Options: []setting.Setting{
		{Name: "cache", Kind: setting.Size, Memory: true},
		{Name: "memtable", Kind: setting.Size},
		{Name: "compactors", Kind: setting.Int},
		{Name: "verify", Kind: setting.Bool},
		{Name: "compression", Kind: setting.Enum, Values: []string{"snappy", "zstd"}},
	},
}

var rocksSpec = engine.Spec{
	Name:       "rocks",
	Components: []engine.Component{{Name: "data"}},
	Modes:      []engine.Mode{{Durability: engine.Sync}},
	// rocks stands in for a server engine too.
	TargetSchemes: []string{"rocks"},
	Image:         "rocks:1",
	Crashable:     true,
	// Its clients run on lanes, unless a target's URL asks for TLS.
	Lanes: true,
	LaneTarget: func(u *url.URL) string {
		if u.Query().Get("tls") != "" {
			return "the target's tls=" + u.Query().Get("tls") + " encrypts its connections: remove tls from the target"
		}
		return ""
	},
}

// herdSpec stands in for an engine of several server nodes, some of which
// a crash may kill (crash: {kind: process, nodes: n}).
var herdSpec = engine.Spec{
	Name:       "herd",
	Components: []engine.Component{{Name: "data"}},
	Modes:      []engine.Mode{{Durability: engine.Sync}},
	Crashable:  true,
	Options:    []setting.Setting{{Name: "nodes", Kind: setting.Int, Default: "3", Min: "1"}},
	CrashNodes: func(o engine.Options) int { return o.Int("nodes") },
}

// ycsbSpec declares a few typed parameters, and checks one thing its
// parameters tie together the way a real workload's New would, so the test
// can see New's error reported on the workload line.
var ycsbSpec = workload.Spec{
	Name:  "ycsb-a",
	Lanes: true,
	Params: []setting.Setting{
		{Name: "records", Kind: setting.Int, Default: "1000", Min: "1"},
		{Name: "fieldcount", Kind: setting.Int, Default: "10", Min: "1"},
		{Name: "fieldlength", Kind: setting.Int, Default: "100", Min: "1"},
		{Name: "requestdistribution", Kind: setting.Enum, Default: "zipfian", Values: []string{"zipfian", "uniform"}},
		{Name: "readproportion", Kind: setting.Ratio, Default: "0.5"},
		{Name: "updateproportion", Kind: setting.Ratio, Default: "0.5"},
	},
	New: func(p setting.Values) (workload.Workload, error) {
		if sum := p.Float("readproportion") + p.Float("updateproportion"); sum != 1 {
			return nil, fmt.Errorf("readproportion and updateproportion add up to %g; make them add up to 1", sum)
		}
		// records x 1000 bytes, as ycsb's default record
		return sizedWorkload{bytes: p.Int64("records") * 1000}, nil
	},
}

// sizedWorkload stands in for a workload that estimates its data set
// (workload.Sizer); validation calls nothing else on it.
type sizedWorkload struct {
	workload.Workload
	bytes int64
}

func (w sizedWorkload) EstimatedBytes() int64 { return w.bytes }

func (testCatalog) EngineSpec(name string) (engine.Spec, bool) {
	switch name {
	case "pebble":
		return pebbleSpec, true
	case "rocks":
		return rocksSpec, true
	case "herd":
		return herdSpec, true
	}
	return engine.Spec{}, false
}

func (testCatalog) EngineNames() []string { return []string{"rocks", "pebble", "herd"} }

// objsSpec stands in for a workload only one tool runs (rados: rados-bench).
var objsSpec = workload.Spec{Name: "objs", Driver: "bench",
	New: func(setting.Values) (workload.Workload, error) { return nil, nil }}

func (testCatalog) Workload(name string) (workload.Spec, bool) {
	switch name {
	case "ycsb-a":
		return ycsbSpec, true
	case "objs":
		return objsSpec, true
	}
	return workload.Spec{}, false
}

func (testCatalog) WorkloadNames() []string { return []string{"objs", "ycsb-a"} }

// benchTool stands in for a standard tool that drives engine rocks only.
var benchTool = tool.Tool{Name: "bench", Check: func(eng, w string) error {
	if eng != "rocks" {
		return fmt.Errorf("driver bench drives engine rocks only")
	}
	return nil
}}

func (testCatalog) Tool(name string) (tool.Tool, bool) { return benchTool, name == "bench" }
func (testCatalog) ToolNames() []string                { return []string{"bench"} }

// Ceph is the real one: the rbd cases check its components, its options
// and the sizing of its devices.
func (testCatalog) Ceph() rbdtier.Ceph { return ceph.Engine{} }

// example is the documented study, which the cases in testdata/parse edit;
// RAMDIR and DISKDIR become temp folders.
var example = func() string {
	b, err := os.ReadFile("testdata/example.yaml")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

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
		Tiers: []Tier{{Spec: tier.Spec{Name: "ram", Path: ram, Kind: tier.FolderSpec{}}, Line: 4},
			{Spec: tier.Spec{Name: "disk", Path: disk, Kind: tier.FolderSpec{}}, Line: 5}},
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
		Caches:        []string{CacheWarm},
		Options:       map[string]string{},
		Source:        src,
		Drivers:       []string{"builtin"},
		File:          "study.yaml",
		DataComponent: "data",
	}
	for i, ti := range s.Tiers {
		// The layering is the folder's, under no crash (tier.Layering's
		// own table test covers it); the rest is compared whole.
		if st := ti.Stack; st.Backing != "path" || st.CrashLayer || st.Latency != nil || st.AtomicWrite != tier.SectorAtomic {
			t.Errorf("tier %s: stack %+v, want a bare folder's of 512B atomic writes", ti.Name, st)
		}
		s.Tiers[i].Stack = tier.Stack{}
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("Parse(example) =\n%+v\nwant\n%+v", s, want)
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
	s := mustParse(t, fill(edit(t, example, []string{"repeat: 1", "repeat: 2\norder: fixed"})))
	cells := s.Matrix()
	nP, nD, nC, nR := len(s.Placements), len(s.Durability), len(s.Clients), s.Repeat
	if want := nP * nD * nC * nR; len(cells) != want || want != 3*2*4*2 || s.RoundSize()*nR != want {
		t.Fatalf("got %d cells, want %d", len(cells), want)
	}
	for i, c := range cells {
		// Placements vary fastest, then clients, then durability; rounds slowest.
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

// TestShuffledRounds: each round's compared cells (the placements of one
// durability and client count) run in an order drawn from the study's
// seed: every block holds each placement once, the same seed gives the
// same order (a resume reproduces it), Seq still counts in execution
// order, over many rounds no placement is favoured to run first, and the
// blocks themselves run in a shuffled order.
func TestShuffledRounds(t *testing.T) {
	fill, _, _ := fixture(t)
	s := mustParse(t, fill(edit(t, example, []string{"repeat: 1", "repeat: 300\norder: {seed: 42}"})))
	cells := s.Matrix()
	again := s.Matrix()
	nP := len(s.Placements)
	first := map[string]int{}
	for i := 0; i < len(cells); i += nP {
		seen := map[string]bool{}
		for k, c := range cells[i : i+nP] {
			if c.Seq != i+k+1 || c.Durability != cells[i].Durability || c.Clients != cells[i].Clients || c.Repeat != cells[i].Repeat {
				t.Fatalf("cell %d (%+v) is not in its block", i+k, c)
			}
			if c.Placement.Name != again[i+k].Placement.Name {
				t.Fatalf("cell %d: %s, then %s from the same seed", i+k, c.Placement.Name, again[i+k].Placement.Name)
			}
			seen[c.Placement.Name] = true
		}
		if len(seen) != nP {
			t.Fatalf("block at %d holds %v, want each placement once", i, seen)
		}
		first[cells[i].Placement.Name]++
	}
	blocks := len(cells) / nP
	for _, p := range s.Placements {
		if share := float64(first[p.Name]) / float64(blocks); share < 0.28 || share > 0.39 {
			t.Errorf("%s ran first in %.2f of blocks, want about 1/3", p.Name, share)
		}
	}
	// Whole rounds are shuffled: a durability mode's block runs before
	// the other's in about half the rounds, so neither side of a
	// durability comparison is always the later.
	if len(s.Durability) < 2 {
		t.Fatal("the example needs two durability modes")
	}
	earlier := 0
	for r := 1; r <= s.Repeat; r++ {
		for _, c := range s.Round(r) {
			if c.Clients == s.Clients[0] && (c.Durability == s.Durability[0] || c.Durability == s.Durability[1]) {
				if c.Durability == s.Durability[0] {
					earlier++
				}
				break
			}
		}
	}
	if share := float64(earlier) / float64(s.Repeat); share < 0.4 || share > 0.6 {
		t.Errorf("%s ran before %s in %.2f of rounds, want about 1/2", s.Durability[0], s.Durability[1], share)
	}
	other := *s
	other.Order.Seed = 43
	if slices.EqualFunc(other.Round(1), s.Round(1), func(a, b Cell) bool { return a.Placement.Name == b.Placement.Name }) {
		t.Error("seeds 42 and 43 give the same first round")
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

// TestPlacementDurabilityIn checks that a placement that pins its
// durability runs in it whatever the durability row.
func TestPlacementDurabilityIn(t *testing.T) {
	pinned, free := Placement{Durability: engine.NoWAL}, Placement{}
	if pinned.DurabilityIn(engine.Sync) != engine.NoWAL || free.DurabilityIn(engine.Sync) != engine.Sync {
		t.Errorf("pinned runs %s, free runs %s in the sync row", pinned.DurabilityIn(engine.Sync), free.DurabilityIn(engine.Sync))
	}
}

// TestLongNames: a name far past the bound is refused as too long, on its
// own line, in one short message. A key past yaml.v3's 1024 characters
// fails to parse, and is named as a long key, not as the syntax error
// yaml.v3 reports ("could not find expected ':'").
func TestLongNames(t *testing.T) {
	fill, _, _ := fixture(t)
	for _, c := range []struct {
		name, old, new, want string
	}{
		{"study name of 100,000 characters", "name: wal-placement-demo", "name: " + strings.Repeat("s", 100000),
			`study.yaml:1: study name "ssssssssssssssssssssssss"... is too long (100000 characters): use letters, digits, - and _ (at most 64`},
		{"placement name of 100,000 characters", "  wal-ram:  {data: disk, wal: ram}", "  " + strings.Repeat("p", 100000) + ": {data: disk, wal: ram}",
			"study.yaml:8: a key of 100000 characters is too long: YAML reads keys of at most 1024, and a name in a study is at most 64; use a shorter name"},
		{"tier name of 5,000 characters", "  ram:  {path: RAMDIR}", "  " + strings.Repeat("t", 5000) + ": {path: RAMDIR}",
			"study.yaml:4: a key of 5000 characters is too long"},
		{"placement name of 5,000 characters in a flow mapping", "placements:\n  all-disk: {data: disk, wal: disk}", "placements: {" + strings.Repeat("p", 5000) + ": {data: disk, wal: disk},",
			"study.yaml:6: a key of 5000 characters is too long"},
		{"tier name of 1,000 characters, which YAML reads", "  ram:  {path: RAMDIR}", "  " + strings.Repeat("t", 1000) + ": {path: RAMDIR}",
			`study.yaml:4: tier name "tttttttttttttttttttttttt"... is too long (1000 characters)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("study.yaml", []byte(fill(edit(t, example, []string{c.old, c.new}))), testCatalog{})
			var ps Problems
			if !errors.As(err, &ps) || len(ps) < 1 || !strings.HasPrefix(ps[0].String(), c.want) {
				t.Fatalf("Parse = %v, want first problem %q", err, c.want)
			}
			if len(ps[0].String()) > 400 {
				t.Errorf("the message is %d characters long, want one short line", len(ps[0].String()))
			}
		})
	}
}
