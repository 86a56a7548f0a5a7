package analytics

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/tierbench/tierbench/engine/server"
	"github.com/tierbench/tierbench/tier"
)

// generatorScript is run by the generator's python (see tpchgen.py).
//
//go:embed tpchgen.py
var generatorScript string

// The generator: duckdb and its tpch extension, pinned together (the
// extension loads only into its own duckdb version; the newest duckdb has
// no tpch wheel to install offline).
const (
	duckdbVersion = "1.4.4"
	// venvEnv names the virtualenv holding them, when it is not the one
	// `make setup` makes in tierbench's state folder.
	venvEnv = "TIERBENCH_TPCH_VENV"
)

// ErrNoGenerator is the failure of a machine without the generator.
var ErrNoGenerator = errors.New("the TPC-H data generator (DuckDB's tpch extension) is not installed")

// venvDir is the generator's virtualenv: $TIERBENCH_TPCH_VENV, else
// venv-tpch in tierbench's state folder, where scripts/setup.sh makes it.
func venvDir() string { return tier.VenvDir("venv-tpch", venvEnv) }

// installCommand installs the generator into venv.
func installCommand(venv string) string {
	return fmt.Sprintf("python3 -m venv %s && %s/bin/pip install duckdb==%s 'duckdb-ext-tpch==%s.*'",
		venv, venv, duckdbVersion, duckdbVersion)
}

// generatorPython returns the virtualenv's python, or ErrNoGenerator with
// the commands that install it.
func generatorPython() (string, error) {
	venv := venvDir()
	py := filepath.Join(venv, "bin", "python")
	if fi, err := os.Stat(py); err != nil || fi.IsDir() {
		return "", fmt.Errorf("%w: %s is missing; run `make setup`, or: %s", ErrNoGenerator, py, installCommand(venv))
	}
	return py, nil
}

// checkGenerator runs the generator's check: python starts and loads the
// tpch extension.
func checkGenerator(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	_, err := runGenerator(ctx, request{Mode: "check"})
	return err
}

// request is what the generator script reads on its standard input.
type request struct {
	Mode    string         `json:"mode"`
	Scale   string         `json:"scale,omitempty"`
	Dir     string         `json:"dir,omitempty"`
	Tables  []tableRequest `json:"tables,omitempty"`
	Queries []queryRequest `json:"queries,omitempty"`
}

type tableRequest struct {
	Name    string `json:"name"`
	Columns string `json:"columns"`
}

type queryRequest struct {
	Name string `json:"name"`
	SQL  string `json:"sql"`
}

// runGenerator runs the script on req and returns the version it prints.
func runGenerator(ctx context.Context, req request) (string, error) {
	py, err := generatorPython()
	if err != nil {
		return "", err
	}
	in, err := json.Marshal(req)
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, py, "-c", generatorScript)
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if lines := strings.Split(msg, "\n"); len(lines) > 5 {
			msg = strings.Join(lines[len(lines)-5:], "\n")
		}
		if req.Mode == "check" {
			return "", fmt.Errorf("%w in %s: %v: %s; run `make setup`, or: %s", ErrNoGenerator, venvDir(), err, msg, installCommand(venvDir()))
		}
		return "", fmt.Errorf("TPC-H generator (%s) %s: %w: %s", py, req.Mode, err, msg)
	}
	return strings.TrimSpace(stdout.String()), nil
}

// dataSet is one scale's generated data: the files, each table's row
// count as the generator wrote it, and DuckDB's answers to the 22 queries.
type dataSet struct {
	dir      string
	version  string
	rows     map[string]int64
	expected map[string]answer
}

// answer is DuckDB's answer to one query: its row count and first row.
type answer struct {
	Rows  int64     `json:"rows"`
	First []*string `json:"first"`
}

// file is table's data file.
func (d *dataSet) file(table string) string { return filepath.Join(d.dir, table+".tbl") }

// dataDir is where scale's data lives in the cache; its marker is
// dataDir.done.
func (w *Workload) dataDir() string { return filepath.Join(w.cacheDir, "sf-"+w.scaleText) }

// expectedDir is where DuckDB's answers to this scale's 22 query texts
// live: named by a hash of the texts, so editing a query computes its
// answers again without generating the data again.
func (w *Workload) expectedDir() string {
	h := sha256.New()
	for n := 1; n <= nQueries; n++ {
		h.Write([]byte(queryText(n, w.scale)))
		h.Write([]byte{0})
	}
	return w.dataDir() + "-expected-" + hex.EncodeToString(h.Sum(nil))[:12]
}

// cached reports whether this scale's data and answers are complete.
func (w *Workload) cached() bool {
	for _, d := range []string{w.dataDir(), w.expectedDir()} {
		if _, err := os.Stat(d + ".done"); err != nil {
			return false
		}
	}
	return true
}

// prepare makes this scale's data and answers unless the cache has them
// (server.Template: under a file lock, with a marker written last, so
// concurrent runs generate once and a killed generation is redone), and
// reads their counts.
func (w *Workload) prepare(ctx context.Context) (*dataSet, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.data != nil {
		return w.data, nil
	}
	dir := w.dataDir()
	version, err := server.Template{Dir: dir, Label: "TPC-H data", Build: func(ctx context.Context, dir string) (string, error) {
		req := request{Mode: "generate", Scale: w.scaleText, Dir: dir}
		for _, t := range tables {
			req.Tables = append(req.Tables, tableRequest{t.name, t.columnList()})
		}
		return w.generate(ctx, req)
	}}.Ensure(ctx)
	if err != nil {
		return nil, fmt.Errorf("generate TPC-H data at scale %s in %s: %w", w.scaleText, dir, err)
	}
	d := &dataSet{dir: dir, version: version}
	if err := readJSON(filepath.Join(dir, "rows.json"), &d.rows); err != nil {
		return nil, err
	}
	edir := w.expectedDir()
	_, err = server.Template{Dir: edir, Label: "TPC-H answers", Build: func(ctx context.Context, dir string) (string, error) {
		req := request{Mode: "expect", Scale: w.scaleText, Dir: dir}
		for n := 1; n <= nQueries; n++ {
			req.Queries = append(req.Queries, queryRequest{opName(n), queryText(n, w.scale)})
		}
		return w.generate(ctx, req)
	}}.Ensure(ctx)
	if err != nil {
		return nil, fmt.Errorf("compute DuckDB's answers at scale %s in %s: %w", w.scaleText, edir, err)
	}
	if err := readJSON(filepath.Join(edir, "expected.json"), &d.expected); err != nil {
		return nil, err
	}
	w.data = d
	return d, nil
}

// generate runs the generator on req in a new folder req.Dir.
func (w *Workload) generate(ctx context.Context, req request) (string, error) {
	if err := os.MkdirAll(req.Dir, 0o755); err != nil {
		return "", err
	}
	w.generated.Add(1)
	return runGenerator(ctx, req)
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("TPC-H cache: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("TPC-H cache %s: %w", path, err)
	}
	return nil
}
