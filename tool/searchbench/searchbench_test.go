package searchbench

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/setting"
	"github.com/tierbench/tierbench/tool"
	"github.com/tierbench/tierbench/workload/searchload"
)

// Tests that run neither a tool nor a node.

// TestParseCSV reads summaries the tools wrote (testdata: OSB 2.4.0 on
// OpenSearch 2.19.1, Rally 2.13.0 on Elasticsearch 6.8.23, captured by
// TestDrive with TIERBENCH_SEARCHBENCH_CAPTURE) and turns them into runs.
func TestParseCSV(t *testing.T) {
	for _, tc := range []struct {
		file     string
		ops      []string
		bulkSize int
		clients  int
		percent  int
		wantOps  map[string]int64 // mean throughput x 5 s (/ bulk size)
		wantP50  map[string]time.Duration
	}{
		{file: "osb-ingest.csv", ops: []string{"bulk"}, bulkSize: 200, clients: 2,
			wantOps: map[string]int64{"bulk": 4}, wantP50: map[string]time.Duration{"bulk": 903801136}},
		{file: "rally-ingest-search.csv", ops: []string{"bulk", "term", "range", "date_histogram", "terms_agg"}, bulkSize: 200, clients: 2, percent: 50,
			wantOps: map[string]int64{"bulk": 3, "term": 25, "range": 24, "date_histogram": 25, "terms_agg": 19},
			wantP50: map[string]time.Duration{"bulk": 1365148953, "term": 50197798}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			figs, err := ParseCSV(f)
			if err != nil {
				t.Fatal(err)
			}
			var tasks []string
			for _, fig := range figs {
				tasks = append(tasks, fig.Task)
				if !fig.HasThroughput || len(fig.ServiceTime) < 2 || fig.ServiceTime[len(fig.ServiceTime)-1].Q != 100 || fig.ErrorRate != 0 {
					t.Errorf("task %s: %+v", fig.Task, fig)
				}
			}
			if !reflect.DeepEqual(tasks, tc.ops) {
				t.Errorf("tasks %v, want %v", tasks, tc.ops)
			}
			p := plan{tasks: splitTasks(tc.clients, tc.percent), bulkSize: tc.bulkSize}
			res, err := result("tool", figs, p, tc.ops, 2*time.Second, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			var sum int64
			for _, o := range res.Measured.ByOp {
				sum += o.Ops
				if o.Ops != tc.wantOps[o.Name] || o.Errors != 0 || o.Latency.TotalCount() != o.Ops {
					t.Errorf("%s: %d ops (%d errors), histogram of %d; want %d ops", o.Name, o.Ops, o.Errors, o.Latency.TotalCount(), tc.wantOps[o.Name])
				}
				if want, ok := tc.wantP50[o.Name]; ok {
					if got := time.Duration(o.Latency.ValueAtQuantile(50)); got < want*999/1000 || got > want*1001/1000 {
						t.Errorf("%s: p50 %v, want the tool's %v", o.Name, got, want)
					}
				}
			}
			if res.Measured.Ops != sum || res.Measured.Length != 5*time.Second || res.Warmup.Length != 2*time.Second ||
				len(res.Warmup.ByOp) != len(tc.ops) || len(res.Intervals) != 1 || res.Intervals[0].Ops != sum || res.FirstError != nil {
				t.Errorf("result %+v", res)
			}
		})
	}
}

// TestResultSadCases: what a summary lacks or says wrong is an error that
// says why; failed requests are errors of their op.
func TestResultSadCases(t *testing.T) {
	const head = "Metric,Task,Value,Unit\n"
	p := plan{tasks: []task{{searchload.OpBulk, 2}}, bulkSize: 100}
	for _, tc := range []struct {
		name, csv, want string
		wantErrors      int64
	}{
		{name: "ended in the warmup", csv: head + "Doc count,,0,\n", want: "ended inside the warmup"},
		{name: "no throughput, errors only", csv: head + "error rate,bulk,100.00,%\n", want: "every request failed"},
		{name: "unknown unit", csv: head + "Mean Throughput,bulk,10,MB/s\n", want: `in "MB/s"`},
		{name: "not a number", csv: head + "Mean Throughput,bulk,ten,docs/s\n", want: "is not a number"},
		{name: "percentile in seconds", csv: head + "50th percentile service time,bulk,1,s\n", want: "want ms"},
		{name: "some failed", csv: head + "Mean Throughput,bulk,1000,docs/s\n50th percentile service time,bulk,5,ms\n100th percentile service time,bulk,9,ms\nerror rate,bulk,20.00,%\n",
			wantErrors: 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			figs, err := ParseCSV(strings.NewReader(tc.csv))
			if err == nil {
				var res *driver.Result
				res, err = result("osb", figs, p, []string{searchload.OpBulk}, 0, 5*time.Second)
				if err == nil && (res.Measured.Errors != tc.wantErrors || res.Measured.Ops != 50-tc.wantErrors ||
					res.FirstError == nil || !strings.Contains(res.FirstError.Error(), "bulk 20.00%")) {
					t.Errorf("result %+v, first error %v", res.Measured, res.FirstError)
				}
			}
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// TestPercentileHistogram: the histogram's percentiles are the tool's,
// its count the requests', its maximum the tool's 100th percentile.
func TestPercentileHistogram(t *testing.T) {
	ps := []Percentile{{50, 10}, {90, 20}, {99, 30}, {100, 40}}
	for _, n := range []int64{1, 3, 10, 1000} {
		h := percentileHistogram(n, ps)
		if h.TotalCount() != n {
			t.Errorf("n=%d: count %d", n, h.TotalCount())
		}
		if got := time.Duration(h.Max()); got < 39990*time.Microsecond || got > 40010*time.Microsecond {
			t.Errorf("n=%d: max %v, want 40ms", n, got)
		}
		if n >= 100 {
			for _, p := range ps[:3] {
				if got := float64(h.ValueAtQuantile(p.Q)) / 1e6; got < p.Ms*0.999 || got > p.Ms*1.001 {
					t.Errorf("n=%d: p%v %.3f ms, want %.0f", n, p.Q, got, p.Ms)
				}
			}
		}
	}
	if h := percentileHistogram(0, ps); h.TotalCount() != 0 {
		t.Errorf("no requests: %d", h.TotalCount())
	}
}

func TestSplitTasks(t *testing.T) {
	for _, tc := range []struct {
		clients, percent int
		want             []task
	}{
		{8, 0, []task{{"bulk", 8}}},
		{8, 100, []task{{"term", 2}, {"range", 2}, {"date_histogram", 2}, {"terms_agg", 2}}},
		{6, 100, []task{{"term", 2}, {"range", 2}, {"date_histogram", 1}, {"terms_agg", 1}}},
		{2, 100, []task{{"term", 1}, {"range", 1}, {"date_histogram", 1}, {"terms_agg", 1}}},
		{16, 50, []task{{"bulk", 8}, {"term", 2}, {"range", 2}, {"date_histogram", 2}, {"terms_agg", 2}}},
		{1, 50, []task{{"bulk", 1}, {"term", 1}, {"range", 1}, {"date_histogram", 1}, {"terms_agg", 1}}},
		{10, 99, []task{{"bulk", 1}, {"term", 3}, {"range", 2}, {"date_histogram", 2}, {"terms_agg", 2}}},
	} {
		if got := splitTasks(tc.clients, tc.percent); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%d clients, %d%% queries: %v, want %v", tc.clients, tc.percent, got, tc.want)
		}
	}
}

// TestTrack writes the tracks of the three workloads and checks what the
// tools read: the Jinja parameters with the run's values as defaults, the
// corpus (sized from warmup + duration, whole bulks per client, looped),
// the index's body, the typed corpus on Elasticsearch 6.
func TestTrack(t *testing.T) {
	os2 := engine.SearchNode{URL: "http://127.0.0.1:9200", Flavor: engine.FlavorOpenSearch, Version: "2.19.1",
		IndexSettings: map[string]any{"index.translog.durability": "request"}}
	es6 := engine.SearchNode{URL: "http://127.0.0.1:9200", Flavor: engine.FlavorElasticsearch, Version: "6.8.23"}
	for _, tc := range []struct {
		bench      Bench
		workload   string
		params     map[string]string
		node       engine.SearchNode
		wantDocs   int64
		wantParams string
	}{
		{OSB, searchload.Ingest, map[string]string{"bulk_size": "1000", "seed": "1"}, os2, 144_000,
			"bulk_size:1000,bulk_indexing_clients:8,warmup_time_period:2,time_period:5"},
		{Rally, searchload.IngestSearch, map[string]string{"bulk_size": "500", "docs": "1000", "search_percent": "50", "seed": "1"}, es6, 140_000,
			"bulk_size:500,bulk_indexing_clients:4,term_clients:1,range_clients:1,date_histogram_clients:1,terms_agg_clients:1,warmup_time_period:2,time_period:5"},
		{Rally, searchload.Search, map[string]string{"bulk_size": "1000", "docs": "1000", "seed": ""}, es6, 0,
			"term_clients:2,range_clients:2,date_histogram_clients:2,terms_agg_clients:2,warmup_time_period:2,time_period:5"},
	} {
		t.Run(tc.bench.Name+"-"+tc.workload, func(t *testing.T) {
			p := newPlan(tc.workload, resolved(t, tc.workload, tc.params), 8, 2*time.Second, 5*time.Second)
			if p.corpusDocs != tc.wantDocs || p.paramsFlag() != tc.wantParams {
				t.Errorf("corpus %d docs, params %s; want %d, %s", p.corpusDocs, p.paramsFlag(), tc.wantDocs, tc.wantParams)
			}
			dir := t.TempDir()
			size, err := tc.bench.writeTrack(dir, p, tc.node)
			if err != nil {
				t.Fatal(err)
			}
			text, err := os.ReadFile(filepath.Join(dir, tc.bench.TrackFile))
			if err != nil {
				t.Fatal(err)
			}
			// Render the Jinja parameters with their defaults, as the
			// tools do when no value is given.
			rendered := string(text)
			for _, kv := range p.params() {
				jinja := "{{ " + kv[0] + " | default(" + kv[1] + ") }}"
				if !strings.Contains(rendered, jinja) {
					t.Errorf("no %s in\n%s", jinja, text)
				}
				rendered = strings.ReplaceAll(rendered, jinja, kv[1])
			}
			var track struct {
				Indices []struct{ Name, Body string }
				Corpora []struct {
					Documents []map[string]any
				}
				Schedule []map[string]any
			}
			if err := json.Unmarshal([]byte(rendered), &track); err != nil {
				t.Fatalf("%v in\n%s", err, rendered)
			}
			if len(track.Indices) != 1 || track.Indices[0].Name != searchload.IndexName {
				t.Errorf("indices %+v", track.Indices)
			}
			body, err := os.ReadFile(filepath.Join(dir, track.Indices[0].Body))
			if want, _ := searchload.IndexBody(tc.node); err != nil || string(body) != string(want) {
				t.Errorf("index body %s, %v", body, err)
			}
			if tc.wantDocs == 0 {
				if len(track.Corpora) != 0 || size != 0 {
					t.Errorf("a search track with a corpus: %+v", track.Corpora)
				}
			} else {
				doc := track.Corpora[0].Documents[0]
				corpus, err := os.ReadFile(filepath.Join(dir, doc["source-file"].(string)))
				lines := strings.Count(string(corpus), "\n")
				if err != nil || int64(lines) != tc.wantDocs || doc["document-count"] != float64(tc.wantDocs) ||
					doc["uncompressed-bytes"] != float64(len(corpus)) || size != int64(len(corpus)) {
					t.Errorf("corpus: %d lines, %d bytes, %v; documents %+v", lines, len(corpus), err, doc)
				}
				if wantType := tc.node.Flavor == engine.FlavorElasticsearch; (doc["target-type"] == "_doc") != wantType {
					t.Errorf("target-type %v on %s", doc["target-type"], tc.node.Flavor)
				}
				if !strings.Contains(rendered, `"looped": true`) {
					t.Errorf("the bulk task does not loop over the corpus")
				}
			}
			if n := strings.Count(rendered, `"time-period": 5`); n != len(p.tasks) {
				t.Errorf("%d tasks with the period, want %d", n, len(p.tasks))
			}
		})
	}
}

// TestCorpusSize: sized from warmup + duration, at least two bulks per
// client, at most maxCorpusDocs rounded up to whole rounds of bulks.
func TestCorpusSize(t *testing.T) {
	for _, tc := range []struct {
		warmup, duration time.Duration
		clients, bulk    int
		want             int64
	}{
		{2 * time.Second, 5 * time.Second, 8, 1000, 144_000},
		{0, time.Second, 64, 1000, 128_000},
		{time.Minute, 5 * time.Minute, 8, 1000, 504_000}, // maxCorpusDocs, in whole rounds
		{0, time.Second, 300, 5000, 3_000_000},
	} {
		p := newPlan(searchload.Ingest, resolved(t, searchload.Ingest, map[string]string{"bulk_size": strconv.Itoa(tc.bulk)}), tc.clients, tc.warmup, tc.duration)
		if p.corpusDocs != tc.want || p.corpusDocs%int64(tc.clients*tc.bulk) != 0 {
			t.Errorf("%v+%v, %d clients of %d: %d docs, want %d", tc.warmup, tc.duration, tc.clients, tc.bulk, p.corpusDocs, tc.want)
		}
	}
}

// resolved are the parameters of search workload name with overrides, as
// a run resolves them (workload.Spec.Resolve).
func resolved(t *testing.T, name string, overrides map[string]string) setting.Values {
	t.Helper()
	for _, s := range searchload.Specs() {
		if s.Name == name {
			v, err := s.Resolve(overrides)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	t.Fatalf("no search workload %s", name)
	return setting.Values{}
}

// TestPreflight: without its virtualenv a tool names the setup command;
// Check and New say which engine and workloads a tool drives.
func TestPreflight(t *testing.T) {
	for _, b := range []Bench{OSB, Rally} {
		venv := filepath.Join(t.TempDir(), "venv")
		t.Setenv(b.VenvEnv, venv)
		err := b.Preflight()
		if err == nil || !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "make setup") ||
			!strings.Contains(err.Error(), "pip install "+b.Package+"=="+b.Version) || !strings.Contains(err.Error(), venv) {
			t.Errorf("%s: %v", b.Name, err)
		}
		if err := b.Check(b.Engine, searchload.Ingest); err != nil {
			t.Errorf("%s: %v", b.Name, err)
		}
		if err := b.Check("postgres", "tpcb"); err == nil || !strings.Contains(err.Error(), "not engine postgres or workload tpcb") {
			t.Errorf("%s: %v", b.Name, err)
		}
		if _, err := b.New(tool.Request{Engine: b.Engine, WorkloadName: searchload.Search}); err == nil {
			t.Errorf("%s: New without a workload", b.Name)
		}
	}
	if err := OSB.Check("elasticsearch", searchload.Search); err == nil || !strings.Contains(err.Error(), "drives engine opensearch") {
		t.Errorf("osb on elasticsearch: %v", err)
	}
}

// beginCount counts Begin calls; it watches no processes.
type beginCount struct{ n int }

func (*beginCount) Started(string, int)       {}
func (*beginCount) Exited(int, time.Duration) {}
func (b *beginCount) Begin()                  { b.n++ }

func TestTaskStartTellsTheWarmupOnceFromTheLog(t *testing.T) {
	for _, tc := range []struct {
		name   string
		chunks []string
		want   int
	}{
		{"no start", []string{"2026-11-22 INFO Racing on track\n", "INFO done\n"}, 0},
		{"osb", []string{"INFO Allocation matrix\n", "2026 INFO osbenchmark.worker_coordinator Worker[0] is executing tasks at index [0].\n", "Worker[1] is executing tasks at index [0].\n"}, 1},
		{"rally", []string{"INFO esrally.driver.driver Worker[0] executing tasks: ['bulk', 'term']\n"}, 1},
		{"split across writes", []string{"Worker[0] is executing ta", "sks at index [0].\n"}, 1},
		{"line not ended yet", []string{"Worker[0] is executing tasks at index [0]."}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &beginCount{}
			w := &taskStart{watch: b}
			for _, c := range tc.chunks {
				if n, err := w.Write([]byte(c)); n != len(c) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", c, n, err)
				}
			}
			if b.n != tc.want {
				t.Errorf("Begin called %d times, want %d", b.n, tc.want)
			}
		})
	}
}
