// Package searchbench runs the search engines' standard benchmark tools as
// a run's driver: opensearch-benchmark (driver osb) on engine opensearch
// and Elastic's Rally (driver rally, esrally) on engine elasticsearch, the
// tools of the seed's study. OSB is a fork of Rally: both read a track
// (OSB calls it a workload) of JSON with Jinja parameters, both take
// `--offline --pipeline=benchmark-only --target-hosts` to measure a node
// they did not start, and both write the same CSV summary.
//
// For each run tierbench writes the track in the run's tool folder (track.go):
// the workload's index (the run's index settings and the builtin clients'
// mapping), a corpus of the same eventdata-like events, and a schedule:
// a bulk task with bulk_indexing_clients = the run's clients, the study's
// warmup as warmup-time-period and its duration as time-period, and for
// the search workloads one search task per query type. The index is the
// one tierbench's load made (and filled, for search), so the tool never
// creates or deletes it. The tool runs in a process group of its own with
// HOME in a private folder, so nothing lands in the user's ~/.rally or
// ~/.benchmark; its CSV becomes the run's figures per op (parse.go).
//
// Each tool lives in a virtualenv `make setup` makes in tierbench's state
// folder (venv-osb, venv-rally), found as the analytics workload finds
// venv-tpch; TIERBENCH_OSB_VENV and TIERBENCH_RALLY_VENV name another.
package searchbench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/tool"
	"github.com/tierbench/tierbench/workload/searchload"
)

// Bench is one of the two tools.
type Bench struct {
	// Name is the driver's name in studies and results.
	Name string
	// Engine is the engine it drives; Flavor that engine's node.
	Engine string
	Flavor engine.SearchFlavor
	// Package and Version are what pip installs (pinned).
	Package, Version string
	// Command is the tool's program in the virtualenv's bin folder;
	// Subcommand runs a benchmark ("run" for OSB, "race" for Rally).
	Command, Subcommand string
	// TrackFile is the file the track's folder must hold, PathFlag and
	// ParamsFlag the flags that name the folder and set its parameters,
	// ReportFlags the flags of the CSV summary's format and file.
	TrackFile, PathFlag, ParamsFlag string
	ReportFlags                     [2]string
	// VenvName is the virtualenv's folder in tierbench's state folder,
	// VenvEnv the variable that names another.
	VenvName, VenvEnv string
}

// OSB is opensearch-benchmark 2.4.0 as driver osb.
var OSB = Bench{
	Name: "osb", Engine: "opensearch", Flavor: engine.FlavorOpenSearch,
	Package: "opensearch-benchmark", Version: "2.4.0",
	Command: "opensearch-benchmark", Subcommand: "run",
	TrackFile: "workload.json", PathFlag: "--workload-path", ParamsFlag: "--workload-params",
	ReportFlags: [2]string{"--results-format", "--results-file"},
	VenvName:    "venv-osb", VenvEnv: "TIERBENCH_OSB_VENV",
}

// Rally is esrally 2.13.0 as driver rally.
var Rally = Bench{
	Name: "rally", Engine: "elasticsearch", Flavor: engine.FlavorElasticsearch,
	Package: "esrally", Version: "2.13.0",
	Command: "esrally", Subcommand: "race",
	TrackFile: "track.json", PathFlag: "--track-path", ParamsFlag: "--track-params",
	ReportFlags: [2]string{"--report-format", "--report-file"},
	VenvName:    "venv-rally", VenvEnv: "TIERBENCH_RALLY_VENV",
}

// workloads are the workloads the tools drive.
var workloads = []string{searchload.Ingest, searchload.Search, searchload.IngestSearch}

// Tool returns b as a tool.Tool (catalog adds its Preflight).
func (b Bench) Tool() tool.Tool {
	return tool.Tool{
		Name: b.Name,
		Doc: fmt.Sprintf("%s %s (PyPI, in %s) on engine %s: a track tierbench writes (the run's index, eventdata-like events, bulk_indexing_clients = clients, one search task per query type), "+
			"--offline --pipeline=benchmark-only; its CSV summary per task becomes the run's figures (throughput, error rate, service time percentiles)",
			b.Package, b.Version, b.VenvName, b.Engine),
		Check: b.Check,
		New:   b.New,
	}
}

// Check says whether b can drive engineName with workloadName.
func (b Bench) Check(engineName, workloadName string) error {
	return tool.Mismatch(fmt.Sprintf("driver %s (%s) drives engine %s with workloads %s", b.Name, b.Package, b.Engine, strings.Join(workloads, ", ")),
		engineName == b.Engine, engineName, slices.Contains(workloads, workloadName), workloadName)
}

// ErrNotInstalled is the failure of a machine without the tool's
// virtualenv.
var ErrNotInstalled = errors.New("not installed")

// VenvDir is the tool's virtualenv: $VenvEnv, else VenvName in
// tierbench's state folder, where scripts/setup.sh makes it.
func (b Bench) VenvDir() string { return tier.VenvDir(b.VenvName, b.VenvEnv) }

// InstallCommand installs the tool into venv.
func (b Bench) InstallCommand(venv string) string {
	return fmt.Sprintf("python3 -m venv %s && %s/bin/pip install %s==%s", venv, venv, b.Package, b.Version)
}

// program returns the tool's program in its virtualenv, or ErrNotInstalled
// with the commands that install it. Its errors do not name the driver:
// the study's checks and the runner do.
func (b Bench) program() (string, error) {
	venv := b.VenvDir()
	p := filepath.Join(venv, "bin", b.Command)
	if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("%s %s is %w: %s is missing; run `make setup`, or: %s",
			b.Package, b.Version, ErrNotInstalled, p, b.InstallCommand(venv))
	}
	return p, nil
}

// Preflight reports whether the tool is installed, so a study with its
// driver is refused before it creates anything.
func (b Bench) Preflight() error {
	_, err := b.program()
	return err
}

// New returns the tool's driver of one run.
func (b Bench) New(req tool.Request) (driver.External, error) {
	if err := b.Check(req.Engine, req.WorkloadName); err != nil {
		return nil, err
	}
	if req.Workload == nil {
		return nil, errors.New("the request has no workload")
	}
	s, err := engine.NeedSearch(req.DB)
	if err != nil {
		return nil, err
	}
	prog, err := b.program()
	if err != nil {
		return nil, err
	}
	return &Driver{Bench: b, Program: prog, Node: s.SearchNode(), WorkloadName: req.WorkloadName,
		Workload: req.Workload, Params: req.Params, Dir: req.Dir}, nil
}
