package searchload

import (
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/workload"
)

func specs() map[string]workload.Spec {
	out := map[string]workload.Spec{}
	for _, s := range Specs() {
		out[s.Name] = s
	}
	return out
}

func hasParam(s workload.Spec, name string) bool {
	_, ok := s.Param(name)
	return ok
}

func TestSpecs(t *testing.T) {
	sp := specs()
	for _, tc := range []struct {
		name     string
		ops      []string
		params   []string
		docs     int64
		estimate int64
		metric   bool
	}{
		{Ingest, []string{OpBulk}, []string{"bulk_size", "seed"}, 0, 0, true},
		{Search, []string{"term", "range", "date_histogram", "terms_agg"}, []string{"bulk_size", "docs", "seed"}, 10000, 10000 * storedBytesPerDoc, false},
		{IngestSearch, []string{"bulk", "term", "range", "date_histogram", "terms_agg"}, []string{"bulk_size", "docs", "search_percent", "seed"}, 10000, 10000 * storedBytesPerDoc, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, ok := sp[tc.name]
			if !ok {
				t.Fatalf("no spec %s", tc.name)
			}
			if got := s.ParamNames(); !slices.Equal(got, tc.params) {
				t.Errorf("params %v, want %v", got, tc.params)
			}
			w, err := s.Build(nil)
			if err != nil {
				t.Fatalf("defaults: %v", err)
			}
			if got := w.Ops(); !slices.Equal(got, tc.ops) {
				t.Errorf("ops %v, want %v", got, tc.ops)
			}
			sw := w.(*Workload)
			bulk, query := sw.opIndexes()
			if (bulk >= 0) != slices.Contains(tc.ops, OpBulk) || (bulk >= 0 && tc.ops[bulk] != OpBulk) {
				t.Errorf("bulk op index %d in %v", bulk, tc.ops)
			}
			if (query >= 0) != slices.Contains(tc.ops, OpTerm) || (query >= 0 && !slices.Equal(tc.ops[query:], queryOps)) {
				t.Errorf("first query op index %d in %v", query, tc.ops)
			}
			if sw.docs != tc.docs || sw.EstimatedBytes() != tc.estimate {
				t.Errorf("docs %d, estimate %d; want %d, %d", sw.docs, sw.EstimatedBytes(), tc.docs, tc.estimate)
			}
			if (s.Metric != nil) != tc.metric {
				t.Errorf("metric %+v", s.Metric)
			}
			if s.Metric != nil {
				if s.Metric.Name != "docs/s" || s.Metric.Op != OpBulk || !hasParam(s, s.Metric.PerOpParam) {
					t.Errorf("metric %+v", s.Metric)
				}
				if v, _ := s.Resolve(nil); s.Metric.PerOp(v.Map()) != 1000 {
					t.Errorf("metric counts %v docs per op with the default bulk_size, want 1000", s.Metric.PerOp(v.Map()))
				}
			}
		})
	}
}

func TestParams(t *testing.T) {
	for _, tc := range []struct {
		name      string
		workload  string
		overrides map[string]string
		wantErr   string // "" for none
	}{
		{"bulk_size", Ingest, map[string]string{"bulk_size": "5000"}, ""},
		{"bulk_size at its largest", Ingest, map[string]string{"bulk_size": "50000"}, ""},
		{"search_percent 0: bulks only", IngestSearch, map[string]string{"search_percent": "0"}, ""},
		{"search_percent with its sign", IngestSearch, map[string]string{"search_percent": "100%"}, ""},
		{"seeded", Search, map[string]string{"seed": "42", "docs": "10"}, ""},
		{"seed empty: random", Search, map[string]string{"seed": ""}, ""},
		{"sad: bulk_size 0", Ingest, map[string]string{"bulk_size": "0"}, "workload ingest: bulk_size 0 is out of range: it must be from 1 to 50000"},
		{"sad: bulk_size too large", Search, map[string]string{"bulk_size": "100000"}, "workload search: bulk_size 100000 is out of range: it must be from 1 to 50000"},
		{"sad: bulk_size not a number", Ingest, map[string]string{"bulk_size": "1k"}, "bulk_size \"1k\" is not a whole number"},
		{"sad: docs 0", Search, map[string]string{"docs": "0"}, "docs 0 is out of range: it must be from 1 to 1000000000"},
		{"sad: docs too many", IngestSearch, map[string]string{"docs": "1000000001"}, "docs 1000000001 is out of range"},
		{"sad: docs on ingest", Ingest, map[string]string{"docs": "10"}, "unknown parameter \"docs\" for workload ingest"},
		{"sad: search_percent 101", IngestSearch, map[string]string{"search_percent": "101"}, "search_percent 101 is out of range: it must be from 0 to 100%"},
		{"sad: search_percent a fraction", IngestSearch, map[string]string{"search_percent": "0.5"}, "search_percent \"0.5\" is not a whole percentage"},
		{"sad: seed", Ingest, map[string]string{"seed": "x"}, "seed \"x\" is not a whole number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := specs()[tc.workload].Build(tc.overrides)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("Build(%v) = %v, want error %q", tc.overrides, err, tc.wantErr)
			}
		})
	}
}

// TestParamsCheck: every declared parameter of each workload is a
// setting that can work.
func TestParamsCheck(t *testing.T) {
	for _, s := range Specs() {
		for _, p := range s.Params {
			if err := p.Check(); err != nil {
				t.Errorf("%s: %v", s.Name, err)
			}
		}
	}
}

// TestSeedRepeats checks a seed fixes the events, and no seed picks one.
func TestSeedRepeats(t *testing.T) {
	events := func(o map[string]string) string {
		w, err := specs()[Ingest].Build(o)
		if err != nil {
			t.Fatal(err)
		}
		return string(w.(*Workload).newBulker().gen.appendEvent(nil, 7))
	}
	seeded := map[string]string{"seed": "5"}
	if events(seeded) != events(seeded) {
		t.Error("two workloads with seed 5 write different events")
	}
	if events(nil) == events(nil) {
		t.Error("two unseeded workloads write the same events")
	}
}

// TestWindow checks a query's time window lies among the events claimed,
// a tenth of them wide, for any number of events.
func TestWindow(t *testing.T) {
	for _, claimed := range []int64{0, 1, 50, 100, 1000, 100000} {
		w, err := specs()[Search].Build(map[string]string{"seed": "1"})
		if err != nil {
			t.Fatal(err)
		}
		w.(*Workload).next.Store(claimed)
		c := &client{w: w.(*Workload), rng: workload.NewRand(1, true, streamClients, 0)}
		span := max(claimed, 1) * eventSpacingMs
		for range 100 {
			from, to := c.window()
			if from < eventBase || to > eventBase+span || to <= from {
				t.Fatalf("%d events: window [%d, %d) outside [%d, %d)", claimed, from-eventBase, to-eventBase, 0, span)
			}
			if want := min(max(span/10, minWindowMs), span); to-from != want {
				t.Fatalf("%d events: window %d ms wide, want %d", claimed, to-from, want)
			}
		}
	}
}
