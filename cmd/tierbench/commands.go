package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/tierbench/tierbench/catalog"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/report"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/runner"
	"github.com/tierbench/tierbench/study"
	"github.com/tierbench/tierbench/workload"
)

const defaultResults = "./tierbench-results"

func newRunCmd() *cobra.Command {
	var resultsDir string
	var keep bool
	cmd := &cobra.Command{
		Use:   "run [STUDY.yaml]",
		Short: "Run a study (without a file: the built-in default study, about two minutes)",
		Args:  args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			cat := catalog.Default()
			var st *study.Study
			var err error
			if len(a) == 1 {
				st, err = study.ParseFile(a[0], cat)
			} else {
				st, err = defaultStudy(resultsDir, cat)
			}
			if err != nil {
				return badInput(err)
			}
			store, err := results.Open(resultsDir)
			if err != nil {
				return err
			}
			defer store.Close()
			sum, err := runner.Run(cmd.Context(), st, runner.Options{Catalog: cat, Store: store, Keep: keep, Progress: os.Stderr})
			if err != nil {
				return err
			}
			// Show what was stored even after Ctrl-C cancelled the context.
			runs, err := store.Runs(context.WithoutCancel(cmd.Context()), sum.Study.ID)
			if err != nil {
				return err
			}
			fmt.Println()
			if err := report.Show(os.Stdout, sum.Study, runs); err != nil {
				return err
			}
			fmt.Printf("\nresults stored in %s (study %s); see `tierbench show %s --results %s`\n",
				resultsDir, sum.Study.ID, sum.Study.ID, resultsDir)
			switch {
			case sum.Interrupted:
				return &exitError{code: exitInterrupt, err: errors.New("interrupted: the runs that finished are stored")}
			case sum.Failed > 0:
				return &exitError{code: exitRunsFailed, err: fmt.Errorf("%d of %d runs failed", sum.Failed, sum.OK+sum.Failed)}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&resultsDir, "results", defaultResults, "results directory (holds the SQLite store)")
	cmd.Flags().BoolVar(&keep, "keep", false, "keep each run's folders on the tiers instead of removing them")
	return cmd
}

// defaultStudy builds the built-in study: a tmpfs folder and a folder on the
// disk that holds the results directory.
func defaultStudy(resultsDir string, cat *catalog.Catalog) (*study.Study, error) {
	abs, err := filepath.Abs(resultsDir)
	if err != nil {
		return nil, fmt.Errorf("results directory %s: %w", resultsDir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("create results directory %s: %w", abs, err)
	}
	ram := "/dev/shm/tierbench"
	if _, err := os.Stat("/dev/shm"); err != nil {
		return nil, errors.New("the default study needs /dev/shm for its RAM tier; write a study file with your own tiers")
	}
	return study.Parse("(default study)", []byte(study.DefaultYAML(ram, filepath.Join(abs, "disk-tier"))), cat)
}

func newValidateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate STUDY.yaml",
		Short: "Check a study file without running anything",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			st, err := study.ParseFile(a[0], catalog.Default())
			if err != nil {
				return badInput(err)
			}
			fmt.Printf("%s: ok: %d runs (%d placements x %d durability x %d client counts x %d repeats), about %s of measuring\n",
				a[0], len(st.Matrix()), len(st.Placements), len(st.Durability), len(st.Clients), st.Repeat,
				(st.Warmup+st.Duration)*time.Duration(len(st.Matrix())))
			return nil
		},
	}
}

func newListCmd() *cobra.Command {
	var resultsDir string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List stored studies, newest first",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := results.OpenExisting(resultsDir)
			if err != nil {
				return badInput(err)
			}
			defer store.Close()
			studies, err := store.Studies(cmd.Context())
			if err != nil {
				return err
			}
			report.List(os.Stdout, studies)
			return nil
		},
	}
	cmd.Flags().StringVar(&resultsDir, "results", defaultResults, "results directory")
	return cmd
}

func newShowCmd() *cobra.Command {
	var resultsDir, format string
	cmd := &cobra.Command{
		Use:   "show [STUDY_ID|latest]",
		Short: "Show a stored study: per durability and clients, each placement's throughput and ratio to the baseline",
		Args:  args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if format != "table" && format != "json" {
				return badInput(fmt.Errorf("unknown --format %q: use table or json", format))
			}
			ref := "latest"
			if len(a) == 1 {
				ref = a[0]
			}
			store, err := results.OpenExisting(resultsDir)
			if err != nil {
				return badInput(err)
			}
			defer store.Close()
			st, err := store.Study(cmd.Context(), ref)
			if err != nil {
				if errors.Is(err, results.ErrNoStudy) {
					return badInput(err)
				}
				return err
			}
			runs, err := store.Runs(cmd.Context(), st.ID)
			if err != nil {
				return err
			}
			if format == "json" {
				if runs == nil {
					runs = []results.Run{}
				}
				enc := json.NewEncoder(os.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(struct {
					Study *results.Study `json:"study"`
					Runs  []results.Run  `json:"runs"`
				}{st, runs})
			}
			return report.Show(os.Stdout, st, runs)
		},
	}
	cmd.Flags().StringVar(&resultsDir, "results", defaultResults, "results directory")
	cmd.Flags().StringVar(&format, "format", "table", "output format: table or json")
	return cmd
}

func newWorkloadsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "workloads",
		Short: "List workloads and their parameters",
		Args:  args(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			cat := catalog.Default()
			for _, n := range cat.WorkloadNames() {
				w, _ := cat.Workload(n)
				fmt.Println(workload.Describe(w))
			}
			return nil
		},
	}
}

func newEnginesCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "engines",
		Short: "List engines with their components, durability modes and options",
		Args:  args(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			cat := catalog.Default()
			for _, n := range cat.EngineNames() {
				s, _ := cat.Engine(n)
				fmt.Println(engine.Describe(s))
			}
			return nil
		},
	}
}
