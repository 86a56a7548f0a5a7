package study

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/dustin/go-humanize"

	"github.com/tierbench/tierbench/engine/ceph/rbdtier"
	"github.com/tierbench/tierbench/hostenv"
)

// TestStudyFiles runs the study-file cases in testdata/parse, one file per
// theme. Each case is a study and what Parse makes of it:
//
//	# what the case shows
//	edit [unless-root] [show=(field,...)]
//	- a line of testdata/example.yaml
//	+ the line(s) that replace it
//	----
//	study.yaml:19: the problem Parse reports, one per line
//
// `edit` changes the example study: each hunk (hunks are separated by a
// blank line) is "-" lines, whole consecutive lines of the example found
// after the previous hunk, then the "+" lines that replace them. `study`
// instead takes a whole study file as its input. In either, RAMDIR,
// DISKDIR and TMP stand for the fixture's folders, in the input and in the
// output, and (MEMORY) for the machine's memory in the output. A valid study gives "ok", then the fields named by show (see
// showField). `unless-root` cases are not checked as root, which may write
// to read-only folders. Adding a case is adding text; `go test -rewrite`
// writes the output of every case (check the diff).
func TestStudyFiles(t *testing.T) {
	datadriven.Walk(t, "testdata/parse", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.HasArg("unless-root") && os.Geteuid() == 0 {
				return d.Expected
			}
			var src string
			switch d.Cmd {
			case "study":
				src = d.Input + "\n"
			case "edit":
				var err error
				if src, err = editLines(example, d.Input); err != nil {
					d.Fatalf(t, "%v", err)
				}
			default:
				d.Fatalf(t, "unknown command %q: use study or edit", d.Cmd)
			}
			fill, unfill := fixtureNames(t)
			st, err := Parse("study.yaml", []byte(fill(src)), testCatalog{})
			var ps Problems
			switch {
			case errors.As(err, &ps):
				return unfill(ps.Error())
			case err != nil:
				d.Fatalf(t, "Parse returned %v, want Problems", err)
			}
			out := []string{"ok"}
			if arg, ok := d.Arg("show"); ok {
				for _, field := range arg.Vals {
					out = append(out, showField(t, st, field)...)
				}
			}
			return unfill(strings.Join(out, "\n"))
		})
	})
}

// fixtureNames makes the fixture and returns functions that put its
// folders in place of RAMDIR, DISKDIR and TMP, and back.
func fixtureNames(t *testing.T) (fill, unfill func(string) string) {
	fill, ram, disk := fixture(t)
	tmp := strings.TrimSuffix(fill("TMP/"), "/")
	// RAMDIR and DISKDIR are inside TMP: replace them first.
	// The machine's memory appears in refusals of caches it cannot hold.
	mem := "(" + humanize.IBytes(hostenv.MemoryBytes()) + ")"
	return fill, strings.NewReplacer(ram, "RAMDIR", disk, "DISKDIR", tmp, "TMP", mem, "(MEMORY)").Replace
}

// editLines applies an edit (see TestStudyFiles) to base.
func editLines(base, edit string) (string, error) {
	lines := strings.Split(base, "\n")
	at := 0 // hunks apply in order: each is found after the previous one
	for _, hunk := range strings.Split(edit, "\n\n") {
		var old, repl []string
		for _, l := range strings.Split(hunk, "\n") {
			text := strings.TrimPrefix(l[min(1, len(l)):], " ")
			switch {
			case strings.HasPrefix(l, "-") && len(repl) == 0:
				old = append(old, text)
			case strings.HasPrefix(l, "+"):
				repl = append(repl, text)
			default:
				return "", fmt.Errorf("edit line %q: a hunk is - lines then + lines", l)
			}
		}
		if len(old) == 0 {
			return "", fmt.Errorf("hunk %q has no - lines to say where it goes", hunk)
		}
		i := indexLines(lines, old, at)
		if i < 0 {
			return "", fmt.Errorf("hunk %q: its - lines are not in the study after line %d", hunk, at)
		}
		lines = append(lines[:i], append(repl, lines[i+len(old):]...)...)
		at = i + len(repl)
	}
	return strings.Join(lines, "\n"), nil
}

// indexLines returns where sub first occurs in lines at or after from, or -1.
func indexLines(lines, sub []string, from int) int {
	for i := from; i+len(sub) <= len(lines); i++ {
		if equalLines(lines[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

// profileName is the tier's profile's name, "" if it has none.
func profileName(ti Tier) string {
	if ti.Profile == nil {
		return ""
	}
	return ti.Profile.Name
}

func equalLines(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// showField renders one field of a valid study for `show=`.
func showField(t *testing.T, st *Study, field string) []string {
	plain := map[string]any{
		"baseline": st.Baseline, "durability": st.Durability, "clients": st.Clients, "warmup": st.WarmupText(),
		"duration": st.Duration, "repeat": st.Repeat, "target_rate": st.TargetRate, "target_rates": st.TargetRates, "arrival": st.Arrival,
		"options": showMap(st.Options), "drivers": st.Drivers, "target": st.Target, "max_ops": st.MaxOps,
		"workload": fmt.Sprintf("%s %s (at least %d bytes)", st.Workload.Name, showMap(st.Workload.Params), st.Workload.EstimatedBytes),
	}
	if v, ok := plain[field]; ok {
		return []string{fmt.Sprintf("%s: %v", field, v)}
	}
	var out []string
	switch field {
	case "capacity":
		if st.SLO == nil {
			return []string{"capacity: none"}
		}
		errs := "none"
		if e := st.SLO.Errors; e != nil {
			errs = fmt.Sprint(*e)
		}
		out = append(out, fmt.Sprintf("slo: %s %gus errors %s", st.SLO.Percentile, st.SLO.BoundUs, errs), fmt.Sprintf("search: %+v", st.Search), fmt.Sprintf("need: %g", st.Need))
		if c := st.Costs; c != nil {
			out = append(out, fmt.Sprintf("costs: tiers %v host %v sizes %v currency %q", c.Tiers, c.Host, c.Sizes, c.Currency))
		}
	case "tiers":
		if len(st.Tiers) == 0 {
			return []string{"tiers: none"}
		}
		for _, ti := range st.Tiers {
			s := "tier " + ti.Name + ":"
			kind, kindSpec := ti.TierKind().Key(), any(ti.Kind)
			if rt, ok := rbdtier.Of(ti.Kind); ok {
				kindSpec = rt.Spec // not the Ceph that serves it
			}
			st := ti.Stack
			for _, part := range []struct {
				name string
				spec any
				set  bool
			}{
				{"path", ti.Path, ti.Path != ""}, {kind, kindSpec, kind != "path"}, {"latency", st.Latency, st.Latency != nil},
				{"throttle", st.Throttle, st.Throttle != nil}, {"crash layer", st.CrashLayer, st.CrashLayer},
				{"durable by layer", st.DurableByLayer, st.DurableByLayer},
				{"atomic_write", fmt.Sprintf("%d (%s)", st.AtomicWrite, st.AtomicWriteFrom), st.AtomicWrite != ti.Abilities().AtomicWrite},
				{"write_cache", "volatile", st.VolatileCache},
				{"logs writes", st.Crashes.Reorder, st.Crashes.Reorder},
				{"profile", profileName(ti), ti.Profile != nil},
			} {
				if part.set {
					s += fmt.Sprintf(" %s %+v", part.name, part.spec)
				}
			}
			out = append(out, strings.ReplaceAll(s, "&", ""))
		}
	case "placements":
		for _, p := range st.Placements {
			s := "placement " + p.Name + ": " + showMap(p.Components)
			if p.Durability != "" {
				s += " durability=" + string(p.Durability)
			}
			out = append(out, s)
		}
	case "rounds":
		out = append(out, "rounds: "+st.RoundsText())
	case "order":
		out = append(out, fmt.Sprintf("order: fixed=%v seed=%d seed_set=%v", st.Order.Fixed, st.Order.Seed, st.Order.SeedSet))
	case "margin":
		out = append(out, fmt.Sprintf("margin: %g", st.Margin))
	case "variants":
		for _, v := range st.Variants() {
			line := fmt.Sprintf("variant %q: options %s cache %s crash %s", v.Label, showMap(st.OptionsIn(v)), v.Cache, v.Crash)
			if v.Memory > 0 {
				line += fmt.Sprintf(" memory %d, engine options %s", v.Memory, showMap(st.EngineOptionsIn(v)))
			}
			out = append(out, line)
		}
	case "matrix":
		cells := st.Matrix()
		c := cells[0]
		out = append(out, fmt.Sprintf("matrix: %d cells, the first %s %s clients=%d repeat=%d driver=%s",
			len(cells), c.Placement.Name, c.Placement.DurabilityIn(c.Durability), c.Clients, c.Repeat, c.Driver))
	default:
		t.Fatalf("show: unknown field %q", field)
	}
	return out
}

// showMap renders a map as sorted key=value pairs.
func showMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		keys[i] = k + "=" + m[k]
	}
	return "{" + strings.Join(keys, " ") + "}"
}
