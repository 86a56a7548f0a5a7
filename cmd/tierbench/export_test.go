package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/results/schema"
)

// exportStudy is a tiny Pebble study with two placements in three rounds:
// its document has runs, groups and comparisons.
const exportStudy = `name: export
engine: pebble
tiers:
  ram:  {path: %q}
  disk: {path: %q}
placements:
  all-disk: {data: disk, wal: disk}
  wal-ram:  {data: disk, wal: ram}
baseline: all-disk
durability: [sync]
workload: {name: ycsb-a, records: 1000}
clients: [2]
warmup: 200ms
duration: 400ms
repeat: 3
options: {memtable: 64KiB}
`

// TestExportAndShowFollowTheSchema runs a real study, then checks that
// show's JSON and export's follow the schema and are one document, that
// export's CSV tables hold its runs, groups and comparisons with a header
// row, that -o writes a file named for its format, and export's exit
// codes (2 for bad flags, 4 when nothing is stored).
func TestExportAndShowFollowTheSchema(t *testing.T) {
	work := t.TempDir()
	resultsDir := filepath.Join(work, "results")
	st := writeStudy(t, work, fmt.Sprintf(exportStudy, ramDir(t), filepath.Join(work, "disk")))
	if r := tierbench(t, "run", st, "--results", resultsDir); r.code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	show := tierbench(t, "show", "--results", resultsDir, "--format", "json")
	if show.code != 0 {
		t.Fatalf("show --format json: exit %d\n%s", show.code, show.stderr)
	}
	if err := schema.Validate([]byte(show.stdout)); err != nil {
		t.Errorf("show --format json: %v", err)
	}
	var doc struct {
		SchemaVersion int `json:"schema_version"`
		Runs          []struct {
			ID     string            `json:"id"`
			Events []json.RawMessage `json:"events"`
		} `json:"runs"`
		Groups      []map[string]any `json:"groups"`
		Comparisons []map[string]any `json:"comparisons"`
	}
	if err := json.Unmarshal([]byte(show.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.SchemaVersion != 1 || len(doc.Runs) != 6 || len(doc.Groups) != 2 || len(doc.Comparisons) == 0 {
		t.Fatalf("show's document: schema_version %d, %d runs (want 6), %d groups (want 2), %d comparisons",
			doc.SchemaVersion, len(doc.Runs), len(doc.Groups), len(doc.Comparisons))
	}

	r := tierbench(t, "export", "latest", "--results", resultsDir, "--format", "json")
	if r.code != 0 || r.stdout != show.stdout {
		t.Errorf("export --format json: exit %d, and it is not show's document\n%s", r.code, r.stderr)
	}

	events := 0
	for _, r := range doc.Runs {
		events += len(r.Events)
	}
	if events == 0 {
		t.Errorf("no run of a 64KiB memtable stored a flush: the schema checked no event")
	}
	// Each CSV table: a header row, then one row per run, group,
	// comparison or engine event.
	for _, c := range []struct {
		what, first string
		rows        int
	}{
		{"runs", "study_id,run_id,seq,placement", len(doc.Runs)},
		{"groups", "study_id,placement,durability,clients,n,failed", len(doc.Groups)},
		{"comparisons", "study_id,kind,placement,durability,clients,against", len(doc.Comparisons)},
		{"events", "study_id,run_id,seq,placement,durability,clients,repeat,driver,t_s,at,duration_s,kind,detail", events},
	} {
		r := tierbench(t, "export", "--results", resultsDir, "--format", "csv", "--what", c.what)
		records, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
		if r.code != 0 || err != nil || len(records) != c.rows+1 || !strings.HasPrefix(strings.Join(records[0], ","), c.first) {
			t.Errorf("export --format csv --what %s: exit %d, %v, %d records (want a header and %d)\n%s%s", c.what, r.code, err, len(records), c.rows, r.stdout, r.stderr)
		}
	}

	// -o: the format from the file's name, the same bytes as stdout.
	out := filepath.Join(work, "groups.csv")
	if r := tierbench(t, "export", "--results", resultsDir, "--what", "groups", "-o", out); r.code != 0 {
		t.Errorf("export -o %s: exit %d\n%s", out, r.code, r.stderr)
	}
	want := tierbench(t, "export", "--results", resultsDir, "--format", "csv", "--what", "groups").stdout
	if got, err := os.ReadFile(out); err != nil || !bytes.Equal(got, []byte(want)) {
		t.Errorf("-o %s holds %q (%v), want what stdout gets", out, got, err)
	}
	jsonOut := filepath.Join(work, "study.json")
	if r := tierbench(t, "export", "--results", resultsDir, "-o", jsonOut); r.code != 0 {
		t.Errorf("export -o %s: exit %d\n%s", jsonOut, r.code, r.stderr)
	} else if got, _ := os.ReadFile(jsonOut); schema.Validate(got) != nil {
		t.Errorf("export -o %s: not the schema's document: %v", jsonOut, schema.Validate(got))
	}

	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no output asked", nil, exitBadInput, "--format csv"},
		{"an unknown format", []string{"--format", "xml"}, exitBadInput, "use csv or json"},
		{"an unknown table", []string{"--format", "csv", "--what", "rounds"}, exitBadInput, "use runs, groups, comparisons or events"},
		{"a table of the document", []string{"--format", "json", "--what", "groups"}, exitBadInput, "drop --what"},
		{"a name that contradicts the format", []string{"--format", "json", "-o", filepath.Join(work, "x.csv")}, exitBadInput, "drop --format"},
		{"a folder that does not exist", []string{"-o", filepath.Join(work, "none", "x.csv")}, exitBadInput, "does not exist"},
		{"a study not stored", []string{"20990101-000000-abcdef", "--format", "json"}, exitNothingStored, "not found"},
		{"no results folder", []string{"--format", "json", "--results", filepath.Join(work, "empty")}, exitNothingStored, "no results"},
	} {
		args := append([]string{"export"}, c.args...)
		if !strings.Contains(strings.Join(c.args, " "), "--results") {
			args = append(args, "--results", resultsDir)
		}
		if r := tierbench(t, args...); r.code != c.code || !strings.Contains(r.stderr, c.want) || r.stdout != "" {
			t.Errorf("%s: exit %d (want %d), stdout %q\n%s", c.name, r.code, c.code, r.stdout, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(work, "x.csv")); err == nil {
		t.Error("a refused export wrote its file")
	}
}
