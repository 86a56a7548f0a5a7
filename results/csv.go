package results

import (
	"encoding/csv"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
)

// csvHeader names the columns of WriteCSV, one row per run.
var csvHeader = []string{"study_id", "run_id", "seq", "placement", "components", "durability", "clients", "repeat",
	"driver", "status", "error", "duration_s", "ops", "errors", "late_ops", "throughput_ops_s",
	"p50_us", "p90_us", "p99_us", "p999_us", "max_us", "mean_us", "service_p50_us", "service_p99_us",
	"load_records", "load_s", "engine_version", "verified", "verification",
	"crash", "crash_at_s", "recovery_s", "lost_acked", "lost_window_ms", "consistent", "crash_detail",
	"crash_seed", "corrupt", "corrupt_detail"}

// WriteCSV writes one row per run, for spreadsheets.
func WriteCSV(w io.Writer, runs []Run) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	for _, r := range runs {
		row := []string{r.StudyID, r.ID, strconv.Itoa(r.Seq), r.Placement, ComponentsText(r.Components), r.Durability,
			strconv.Itoa(r.Clients), strconv.Itoa(r.Repeat), r.DriverOf(), r.Status, r.Error, f(r.DurationS), i(r.Ops), i(r.Errors),
			i(r.Late), f(r.ThroughputOpsS), f(r.Latency.P50), f(r.Latency.P90), f(r.Latency.P99), f(r.Latency.P999),
			f(r.Latency.Max), f(r.Latency.Mean), f(r.ServiceTime.P50), f(r.ServiceTime.P99),
			i(r.LoadRecords), f(r.LoadS), r.EngineVersion, strconv.FormatBool(r.Verified), r.Verification}
		row = append(row, crashColumns(r.Crash)...)
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// crashColumns are a crash run's columns, empty for a run without one.
func crashColumns(c *Crash) []string {
	if c == nil {
		return make([]string, 10)
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	lost := ""
	if c.Checked {
		lost = strconv.FormatInt(c.LostAcked, 10)
	}
	seed, corrupt := "", ""
	if c.Model != "" {
		seed = strconv.FormatUint(c.Seed, 10)
	}
	if c.CorruptChecked || c.Corrupt {
		corrupt = strconv.FormatBool(c.Corrupt)
	}
	return []string{c.Kind, f(c.AtS), f(c.RecoveryS), lost, f(c.LostWindowMS), strconv.FormatBool(c.Consistent), c.Detail,
		seed, corrupt, c.CorruptDetail}
}

// ComponentsText renders component -> tier as "data=disk;wal=ram".
func ComponentsText(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, ";")
}

// eventsHeader names the columns of WriteEventsCSV, one row per event.
var eventsHeader = []string{"study_id", "run_id", "seq", "placement", "durability", "clients", "repeat", "driver",
	"t_s", "at", "duration_s", "kind", "detail"}

// WriteEventsCSV writes one row per engine event of each run
// (Run.Events), with the run's cell, for lining events up with the
// timeline in a spreadsheet.
func WriteEventsCSV(w io.Writer, runs []Run) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(eventsHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, r := range runs {
		for _, e := range r.Events {
			if err := cw.Write([]string{r.StudyID, r.ID, strconv.Itoa(r.Seq), r.Placement, r.Durability, strconv.Itoa(r.Clients),
				strconv.Itoa(r.Repeat), r.DriverOf(), f(e.T), e.At.Format(time.RFC3339Nano), f(e.DurationS), e.Kind, e.Detail}); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
