package searchbench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/setting"
	"github.com/tierbench/tierbench/workload"
	"github.com/tierbench/tierbench/workload/searchload"
)

// The track's files, beside TrackFile in its folder.
const (
	indexFile  = "index.json"
	corpusFile = "documents.json"
	corpusName = "eventdata-tierbench"
)

// The corpus is sized for the run's warmup + duration at corpusRate
// documents a second, about twice what OpenSearch and Elasticsearch index
// on this project's 2-core machines, at least two bulks per client and at
// most maxCorpusDocs, in whole rounds of one bulk per client; the bulk
// task loops over it (both tools' `looped`),
// so a faster node starts the corpus over instead of ending the task early:
// a corpus that ran out inside the warmup would leave the task without a
// single measured sample.
const (
	corpusRate    = 20_000
	maxCorpusDocs = 500_000 // ~370 MB
)

// task is one task of the schedule: an op of the workload run by clients
// of the tool.
type task struct {
	op      string
	clients int
}

// plan is what one run asks of the tool, from the workload's parameters
// and the run's clients, warmup and duration.
type plan struct {
	tasks            []task
	bulkSize         int
	warmupS, periodS int64
	seed             uint64
	firstEvent       int64 // the corpus's first event: after the loaded ones
	corpusDocs       int64 // 0 without a bulk task
	loadedEvents     int64 // what the queries' time windows cover
}

// wholeSeconds rounds d to whole seconds, the tools' unit.
func wholeSeconds(d time.Duration) int64 { return int64(math.Round(d.Seconds())) }

// newPlan plans the run of workloadName (v: its resolved parameters,
// workload.Spec.Resolve) with clients for warmup and duration.
func newPlan(workloadName string, v setting.Values, clients int, warmup, duration time.Duration) plan {
	p := plan{warmupS: wholeSeconds(warmup), periodS: max(wholeSeconds(duration), 1)}
	p.bulkSize = v.Int("bulk_size")
	seed, seeded := workload.Seed(v, "seed")
	p.seed = uint64(seed)
	if !seeded {
		p.seed = rand.Uint64()
	}
	if workloadName != searchload.Ingest {
		p.loadedEvents = v.Int64("docs")
	}
	searchPercent := 0
	switch workloadName {
	case searchload.Search:
		searchPercent = 100
	case searchload.IngestSearch:
		searchPercent = v.Int("search_percent")
	}
	p.tasks = splitTasks(clients, searchPercent)
	p.firstEvent = p.loadedEvents
	if c := p.clientsOf(searchload.OpBulk); c > 0 {
		perRound := int64(c * p.bulkSize) // one bulk of each client
		want := (p.warmupS + p.periodS) * corpusRate
		docs := min(max(want, 2*perRound), max(maxCorpusDocs, 2*perRound))
		p.corpusDocs = (docs + perRound - 1) / perRound * perRound
	}
	return p
}

// queryOps are the query types in the builtin mix's order.
var queryOps = []string{searchload.OpTerm, searchload.OpRange, searchload.OpDateHistogram, searchload.OpTermsAgg}

// splitTasks shares clients between the bulk task and the query tasks as
// the builtin clients share their ops: searchPercent of them query (split
// evenly over the query types), the others index. Each task the mix has
// gets at least one client, so fewer clients than tasks run one a task.
func splitTasks(clients, searchPercent int) []task {
	clients = max(clients, 1)
	var tasks []task
	queriers := 0
	switch {
	case searchPercent <= 0:
		return []task{{searchload.OpBulk, clients}}
	case searchPercent >= 100:
		queriers = clients
	default:
		queriers = min(max(int(math.Round(float64(clients*searchPercent)/100)), 1), max(clients-1, 1))
		tasks = append(tasks, task{searchload.OpBulk, max(clients-queriers, 1)})
	}
	for i, op := range queryOps {
		n := queriers / len(queryOps)
		if i < queriers%len(queryOps) {
			n++
		}
		tasks = append(tasks, task{op, max(n, 1)})
	}
	return tasks
}

// clientsOf returns the clients of op's task, 0 if the plan has none.
func (p plan) clientsOf(op string) int {
	for _, t := range p.tasks {
		if t.op == op {
			return t.clients
		}
	}
	return 0
}

// ops lists the plan's tasks' ops.
func (p plan) ops() []string {
	out := make([]string, len(p.tasks))
	for i, t := range p.tasks {
		out[i] = t.op
	}
	return out
}

// clientsParam names the Jinja parameter of op's clients:
// bulk_indexing_clients as in Rally's eventdata track, <op>_clients for a
// query type.
func clientsParam(op string) string {
	if op == searchload.OpBulk {
		return "bulk_indexing_clients"
	}
	return op + "_clients"
}

// params are the track's Jinja parameters with the run's values, in the
// order the command line gives them.
func (p plan) params() [][2]string {
	var out [][2]string
	if p.corpusDocs > 0 {
		out = append(out, [2]string{"bulk_size", strconv.Itoa(p.bulkSize)})
	}
	for _, t := range p.tasks {
		out = append(out, [2]string{clientsParam(t.op), strconv.Itoa(t.clients)})
	}
	return append(out,
		[2]string{"warmup_time_period", strconv.FormatInt(p.warmupS, 10)},
		[2]string{"time_period", strconv.FormatInt(p.periodS, 10)})
}

// paramsFlag is params as both tools' --track-params/--workload-params
// take them: name:value, comma separated.
func (p plan) paramsFlag() string {
	var parts []string
	for _, kv := range p.params() {
		parts = append(parts, kv[0]+":"+kv[1])
	}
	return strings.Join(parts, ",")
}

// jinja is a placeholder in the track's JSON for a Jinja parameter: the
// marshalled string "@@name@@" becomes {{ name | default(value) }}.
func jinja(name string) string { return "@@" + name + "@@" }

// writeTrack writes the track's folder dir: TrackFile, the index's body,
// and the corpus. It returns the corpus's size in bytes.
func (b Bench) writeTrack(dir string, p plan, node engine.SearchNode) (int64, error) {
	body, err := searchload.IndexBody(node)
	if err != nil {
		return 0, err
	}
	if err := os.WriteFile(filepath.Join(dir, indexFile), body, 0o600); err != nil {
		return 0, fmt.Errorf("track: %w", err)
	}
	var corpusBytes int64
	if p.corpusDocs > 0 {
		if corpusBytes, err = writeCorpus(filepath.Join(dir, corpusFile), p.seed, p.firstEvent, p.corpusDocs); err != nil {
			return 0, err
		}
	}
	text, err := trackText(p, node, corpusBytes)
	if err != nil {
		return 0, err
	}
	if err := os.WriteFile(filepath.Join(dir, b.TrackFile), text, 0o600); err != nil {
		return 0, fmt.Errorf("track: %w", err)
	}
	return corpusBytes, nil
}

// trackText is the track's JSON, with the run's values as the defaults
// of its Jinja parameters.
func trackText(p plan, node engine.SearchNode, corpusBytes int64) ([]byte, error) {
	mappingType, err := searchload.MappingType(node)
	if err != nil {
		return nil, err
	}
	queries, err := searchload.FixedQueries(node, p.loadedEvents)
	if err != nil {
		return nil, err
	}
	bodies := map[string]json.RawMessage{}
	for _, q := range queries {
		bodies[q.Op] = q.Body
	}
	var tasks []map[string]any
	for _, t := range p.tasks {
		op := map[string]any{"name": t.op}
		if t.op == searchload.OpBulk {
			op["operation-type"] = "bulk"
			op["bulk-size"] = jinja("bulk_size")
			op["looped"] = true
		} else {
			op["operation-type"] = "search"
			op["index"] = searchload.IndexName
			op["body"] = bodies[t.op]
			// The builtin clients' queries skip the shard request cache.
			op["request-params"] = map[string]string{"request_cache": "false"}
		}
		tasks = append(tasks, map[string]any{
			"operation":          op,
			"clients":            jinja(clientsParam(t.op)),
			"warmup-time-period": jinja("warmup_time_period"),
			"time-period":        jinja("time_period"),
		})
	}
	track := map[string]any{
		"version":     2,
		"description": "tierbench's " + searchload.IndexName + " workload: eventdata-like web access-log events (tool/searchbench)",
		"indices":     []map[string]any{{"name": searchload.IndexName, "body": indexFile}},
	}
	if len(tasks) == 1 {
		track["schedule"] = tasks
	} else {
		track["schedule"] = []map[string]any{{"parallel": map[string]any{"tasks": tasks}}}
	}
	if p.corpusDocs > 0 {
		doc := map[string]any{"source-file": corpusFile, "document-count": p.corpusDocs,
			"uncompressed-bytes": corpusBytes, "target-index": searchload.IndexName}
		if mappingType != "" {
			doc["target-type"] = mappingType
		}
		track["corpora"] = []map[string]any{{"name": corpusName, "documents": []map[string]any{doc}}}
	}
	text, err := json.MarshalIndent(track, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("track: %w", err)
	}
	s := string(text)
	for _, kv := range p.params() {
		s = strings.ReplaceAll(s, `"`+jinja(kv[0])+`"`, "{{ "+kv[0]+" | default("+kv[1]+") }}")
	}
	return []byte(s + "\n"), nil
}

// writeCorpus writes events first..first+n-1 of seed to path, one JSON
// document a line, and returns the file's size.
func writeCorpus(path string, seed uint64, first, n int64) (int64, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, fmt.Errorf("corpus: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	gen := searchload.NewEventWriter(seed)
	var (
		line []byte
		size int64
	)
	for i := first; i < first+n; i++ {
		line = append(gen.AppendEvent(line[:0], i), '\n')
		size += int64(len(line))
		if _, err := w.Write(line); err != nil {
			f.Close()
			return 0, fmt.Errorf("corpus: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return 0, fmt.Errorf("corpus: %w", err)
	}
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("corpus: %w", err)
	}
	return size, nil
}
