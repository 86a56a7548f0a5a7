package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/results/schema"
	"github.com/tierbench/tierbench/tier/probe"
)

// crashFixture is a study with crash runs, as TestJSONCarriesCrashCosts
// builds it: its document has crash_costs and runs[].crash.
func crashFixture() *fixture {
	f := newFixture(defaultOpts())
	f.st.Crashes = []string{"none", "power"}
	for i := range f.runs {
		if i%2 == 1 && f.runs[i].Status == results.RunOK {
			f.runs[i].Crash = &results.Crash{Kind: "power", Checked: true, Consistent: true, LostAcked: 70, Acked: 70, RecoveryS: 0.1,
				Detail: "70 of 70 record fields with an acknowledged write lost it", Lost: "3 files"}
		}
	}
	return f
}

// tornFixture is a study whose crash runs cut the power under the torn
// model and found corruption: its runs[].crash carry the model, its seed
// and the engine's own check.
func tornFixture() *fixture {
	f := newFixture(defaultOpts())
	f.st.Crashes = []string{"none", "power:torn"}
	for i := range f.runs {
		if i%2 == 1 && f.runs[i].Status == results.RunOK {
			f.runs[i].Crash = &results.Crash{Kind: "power:torn", Checked: true, Consistent: true, Acked: 70, RecoveryS: 0.1,
				Model: "torn", Keep: 0.5, Seed: 1 << 40, AtomicWriteB: 4096,
				CorruptChecked: true, Corrupt: true, CorruptDetail: "pg_amcheck: checksum verification failed in block 3 of relation base/5/16384"}
		}
	}
	return f
}

// probedFixture is the fixture with a stored probe of its ram tier that
// measured the fsync with several writers at once (a profiled tier's).
func probedFixture() *fixture {
	f := newFixture(defaultOpts())
	lat := probe.Latency{P50: 127, P99: 210}
	f.st.Probes = map[string]*results.Probe{"ram": {TakenAt: time.Unix(0, 0).UTC(), MountPoint: "/dev/shm", Quick: true,
		Tier: probe.Tier{Path: "/dev/shm/x", FSType: "tmpfs", Fio: &probe.Fio{FsyncLat: lat, SyncCeilingPerS: 7874, FioVersion: "fio-3.33",
			FsyncAtOnce: []probe.SyncsAtOnce{{Syncs: 2, Lat: probe.Latency{P50: 151, P99: 276}}, {Syncs: 8, Lat: probe.Latency{P50: 239, P99: 514}}}}}}}
	return f
}

// arrivalsFixture is a capacity study whose steps checked their sends:
// Poisson ones passing and failing, a constant one.
func arrivalsFixture() (*results.Study, []results.Run) {
	st, runs := capacityFixture(0)
	st.Arrival = "poisson"
	a2, p, spread := 3.4, 0.012, 0.04
	for i := range runs {
		c := &results.ArrivalCheck{Process: "poisson", Gaps: 500, MeanGapUs: 800, IntendedGapUs: 800, A2: &a2, P: &p,
			Why: "arrivals not Poisson (A² = 3.40, p = 0.012, 500 gaps)"}
		switch i % 3 {
		case 1:
			c = &results.ArrivalCheck{Process: "poisson", Gaps: 500, MeanGapUs: 800, IntendedGapUs: 800, A2: &spread, P: &spread, OK: true}
		case 2:
			c = &results.ArrivalCheck{Process: "constant", Gaps: 500, MeanGapUs: 800, IntendedGapUs: 800, Spread: &spread, OK: true}
		}
		runs[i].Arrivals = c
	}
	return st, runs
}

// TestSchemaValidatesDocuments: the document of every kind of study the
// tests build (failed runs, telemetry, a swept option, a workload's own
// metric, crash runs, runs stored long ago) follows the schema.
func TestSchemaValidatesDocuments(t *testing.T) {
	oldSt, oldRuns := oldStudy(t)
	arrSt, arrRuns := arrivalsFixture()
	for _, c := range []struct {
		name string
		st   *results.Study
		runs []results.Run
	}{
		{"the fixture", newFixture(defaultOpts()).st, newFixture(defaultOpts()).runs},
		{"a failed group", newFixture(fixtureOpts{placements: []string{"wal-ram", "all-ram"}, clients: []int{4}, repeat: 3, seconds: 3, failGroup: "wal-ram"}).st,
			newFixture(fixtureOpts{placements: []string{"wal-ram", "all-ram"}, clients: []int{4}, repeat: 3, seconds: 3, failGroup: "wal-ram"}).runs},
		{"a swept option", sweptFixture().st, sweptFixture().runs},
		{"a workload's own metric", tpccFixture().st, tpccFixture().runs},
		{"crash runs", crashFixture().st, crashFixture().runs},
		{"torn crash runs", tornFixture().st, tornFixture().runs},
		{"a probe with writers at once", probedFixture().st, probedFixture().runs},
		{"runs stored long ago", oldSt, oldRuns},
		{"capacity steps with their arrivals checked", arrSt, arrRuns},
		{"no runs", newFixture(defaultOpts()).st, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := JSON(&out, c.st, c.runs); err != nil {
				t.Fatal(err)
			}
			if err := schema.Validate(out.Bytes()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestSchemaCatchesDrift: a document that departs from the schema (a field
// the schema does not know, a required one missing, another type, a
// verdict not among the four) fails, naming where.
func TestSchemaCatchesDrift(t *testing.T) {
	var out bytes.Buffer
	if err := JSON(&out, newFixture(defaultOpts()).st, newFixture(defaultOpts()).runs); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, want string
		edit       func(doc map[string]any)
	}{
		{"an unknown field in a run", "/runs/0", func(doc map[string]any) { run(doc)["throughput"] = 1.0 }},
		{"a required field missing", "/study", func(doc map[string]any) { delete(doc["study"].(map[string]any), "id") }},
		{"a number as a string", "/runs/0/throughput_ops_s", func(doc map[string]any) { run(doc)["throughput_ops_s"] = "fast" }},
		{"a verdict not in the list", "/comparisons/0/verdict", func(doc map[string]any) {
			doc["comparisons"].([]any)[0].(map[string]any)["verdict"] = "within noise"
		}},
		{"an arrival process not in the list", "/runs/0/arrivals/process", func(doc map[string]any) {
			run(doc)["arrivals"] = map[string]any{"process": "bursty", "gaps": 500, "mean_gap_us": 1.0, "intended_gap_us": 1.0, "ok": true}
		}},
		{"another schema version", "/schema_version", func(doc map[string]any) { doc["schema_version"] = 2 }},
		{"a time that is not one", "/study/started_at", func(doc map[string]any) { doc["study"].(map[string]any)["started_at"] = "yesterday" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			var doc map[string]any
			if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			c.edit(doc)
			b, _ := json.Marshal(doc)
			err := schema.Validate(b)
			if err == nil {
				t.Fatal("the schema accepts it")
			}
			if !strings.Contains(err.Error(), "'"+c.want) {
				t.Errorf("the error does not name %s:\n%v", c.want, err)
			}
		})
	}
}

func run(doc map[string]any) map[string]any { return doc["runs"].([]any)[0].(map[string]any) }

// TestSchemaCoversDocument walks the Go types of Document beside the
// schema, so that a field added to the JSON (on any path, even one the
// documents above do not reach) fails here until the schema has it: each
// struct's JSON fields are the schema's properties, those without
// omitempty are required, no other key is allowed, and each field's type
// is the schema's, null allowed where Go may write null (a nil slice, map
// or pointer without omitempty), except the document's lists, which JSON
// always fills.
func TestSchemaCoversDocument(t *testing.T) {
	var root map[string]any
	if err := json.Unmarshal(schema.V1, &root); err != nil {
		t.Fatal(err)
	}
	w := schemaWalk{t: t, root: root, filled: []string{"study", "runs", "groups", "verdicts", "answer", "comparisons"}}
	w.check("", reflect.TypeOf(Document{}), root, false)
}

type schemaWalk struct {
	t    *testing.T
	root map[string]any
	// filled are the document's fields JSON never leaves null.
	filled []string
}

// resolve follows a $ref, and of an anyOf with null the other branch.
func (w schemaWalk) resolve(s map[string]any) (out map[string]any, nullable bool) {
	if alts, ok := s["anyOf"].([]any); ok {
		for _, a := range alts {
			m := a.(map[string]any)
			if m["type"] == "null" {
				nullable = true
			} else {
				out = m
			}
		}
		s = out
	}
	if ref, ok := s["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/$defs/")
		s = w.root["$defs"].(map[string]any)[name].(map[string]any)
	}
	return s, nullable || slices.Contains(types(s), "null")
}

// types is a schema's type keyword as a list.
func types(s map[string]any) []string {
	switch v := s["type"].(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			out = append(out, x.(string))
		}
		return out
	}
	return nil
}

func (w schemaWalk) check(path string, t reflect.Type, s map[string]any, mayBeNull bool) {
	s, nullable := w.resolve(s)
	if mayBeNull && !nullable {
		w.t.Errorf("%s: Go may write null here (a nil %s without omitempty), and the schema does not allow it", path, t.Kind())
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	want := map[reflect.Kind]string{reflect.String: "string", reflect.Bool: "boolean", reflect.Int: "integer", reflect.Int64: "integer",
		reflect.Uint64: "integer", reflect.Float64: "number", reflect.Slice: "array", reflect.Array: "array", reflect.Map: "object", reflect.Struct: "object"}[t.Kind()]
	if t == reflect.TypeOf(time.Time{}) {
		want = "string"
		if s["format"] != "date-time" {
			w.t.Errorf("%s: a time, and the schema has no date-time format", path)
		}
	}
	if want == "" {
		w.t.Fatalf("%s: the walk does not know Go kind %s", path, t.Kind())
	}
	if _, isConst := s["const"]; !isConst && !slices.Contains(types(s), want) {
		w.t.Errorf("%s: Go writes a %s, the schema says %v", path, want, s["type"])
		return
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		items, _ := s["items"].(map[string]any)
		if items == nil {
			w.t.Errorf("%s: an array without items", path)
			return
		}
		w.check(path+"[]", t.Elem(), items, false)
	case reflect.Map:
		values, _ := s["additionalProperties"].(map[string]any)
		if values == nil {
			w.t.Errorf("%s: a map by name, and the schema does not type its values", path)
			return
		}
		w.check(path+"{}", t.Elem(), values, false)
	case reflect.Struct:
		if t != reflect.TypeOf(time.Time{}) {
			w.checkStruct(path, t, s)
		}
	}
}

func (w schemaWalk) checkStruct(path string, t reflect.Type, s map[string]any) {
	props, _ := s["properties"].(map[string]any)
	if s["additionalProperties"] != false {
		w.t.Errorf("%s: the schema allows keys tierbench does not write (additionalProperties is not false)", path)
	}
	var required []string
	for _, r := range s["required"].([]any) {
		required = append(required, r.(string))
	}
	seen := map[string]bool{}
	for _, f := range jsonFields(t) {
		at := path + "." + f.name
		seen[f.name] = true
		p, ok := props[f.name].(map[string]any)
		if !ok {
			w.t.Errorf("%s: written by tierbench, missing from the schema", at)
			continue
		}
		if f.omitempty == slices.Contains(required, f.name) {
			w.t.Errorf("%s: omitempty is %v, so it should %sbe required", at, f.omitempty, map[bool]string{true: "not ", false: ""}[f.omitempty])
		}
		k := f.typ.Kind()
		mayBeNull := !f.omitempty && (k == reflect.Pointer || k == reflect.Slice || k == reflect.Map) && !(path == "" && slices.Contains(w.filled, f.name))
		w.check(at, f.typ, p, mayBeNull)
	}
	for name := range props {
		if !seen[name] {
			w.t.Errorf("%s.%s: in the schema, never written by tierbench", path, name)
		}
	}
}

type jsonField struct {
	name      string
	omitempty bool
	typ       reflect.Type
}

// jsonFields are the fields encoding/json writes of struct t, embedded
// structs' inlined.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		tag := f.Tag.Get("json")
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		if strings.Contains(opts, "string") {
			panic(fmt.Sprintf("%s.%s: the walk does not know the string option", t, f.Name))
		}
		out = append(out, jsonField{name, strings.Contains(opts, "omitempty"), f.Type})
	}
	return out
}
