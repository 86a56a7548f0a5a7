package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/catalog"
	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/platform/kube/node"
	"github.com/tierbench/tierbench/progress"
	"github.com/tierbench/tierbench/report"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/runner"
	"github.com/tierbench/tierbench/stats"
	"github.com/tierbench/tierbench/study"
	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/tier/probe"
	"github.com/tierbench/tierbench/tool"
	"github.com/tierbench/tierbench/workload"
)

const defaultResults = "./tierbench-results"

func newRunCmd() *cobra.Command {
	var resultsDir, resume string
	var keep bool
	var metrics metricsFlags
	cmd := &cobra.Command{
		Use:   "run [STUDY.yaml]",
		Short: "Run a study (without a file: the built-in default study, at most about three minutes)",
		Args:  args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			cat := catalog.Default()
			var st *study.Study
			var prev *results.Study
			live, err := metrics.serve(cmd) // first: a refused address writes nothing
			if err != nil {
				return err
			}
			defer metrics.stop()
			switch {
			case cmd.Flags().Changed("resume") && strings.TrimSpace(resume) == "":
				err = errors.New("--resume needs the id of the study to take up (tierbench list shows them)")
			case resume != "":
				st, prev, err = resumeStudy(cmd.Context(), resultsDir, resume, a, cat)
			case len(a) == 1:
				st, err = study.ParseFile(a[0], cat)
			default:
				st, err = defaultStudy(resultsDir, cat)
			}
			if err != nil {
				return badInput(err)
			}
			// The machine is checked before the ledger and the results
			// store exist: a refused study creates nothing.
			if err := study.Preflight(st, cat, tier.StateDir()); err != nil {
				return badInput(err)
			}
			if err := checkCluster(cmd.Context(), st); err != nil {
				return badInput(err)
			}
			if err := tier.CheckCreatable(resultsDir); err != nil {
				return badInput(fmt.Errorf("--results %s cannot be made: %v; give a folder you can write", resultsDir, err))
			}
			printTierNotes(os.Stderr, st)
			ledger, err := tier.OpenLedger(tier.StateDir())
			if err != nil {
				return err
			}
			store, err := results.Open(resultsDir)
			if err != nil {
				return err
			}
			defer store.Close()
			var obs runner.Observer = progress.NewPlain(os.Stderr)
			closeBar := func() {}
			if isTerminal(os.Stderr) {
				term := progress.NewTerminal(os.Stderr, terminalWidth(os.Stderr))
				obs, closeBar = term, term.Close
			}
			sum, err := runner.Run(cmd.Context(), st, runner.Options{Catalog: cat, Store: store, Keep: keep, Progress: obs, Ledger: ledger,
				Resume: prev, Explain: explainRun, Live: live})
			closeBar() // before the table, which shares the terminal
			var left *runner.LeftoversError
			if errors.As(err, &left) {
				return badInput(err)
			}
			if err != nil && sum == nil && cmd.Context().Err() == nil {
				// The study stopped before its first run (its tiers could
				// not be made): nothing was measured, nothing stored.
				return &exitError{code: exitNothingMeasured, err: fmt.Errorf("%w; nothing was measured", err)}
			}
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
			case !anyMeasured(runs):
				return &exitError{code: exitNothingMeasured, err: fmt.Errorf("nothing was measured: all %d runs failed before their measured window; their errors are above (tierbench show %s --format csv lists them)", sum.Failed, sum.Study.ID)}
			case sum.Failed > 0:
				return &exitError{code: exitRunsFailed, err: fmt.Errorf("%d of %d runs failed", sum.Failed, sum.OK+sum.Failed)}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&resultsDir, "results", defaultResults, "results directory (holds the SQLite store)")
	cmd.Flags().BoolVar(&keep, "keep", false, "keep each run's folders on the tiers instead of removing them")
	cmd.Flags().StringVar(&resume, "resume", "", "take up an interrupted study: run only its cells without an ok run, into the same study")
	metrics.bind(cmd)
	return cmd
}

// anyMeasured reports whether any run reached its measured window: an ok
// run, or a failed one that measured operations or time there before it
// failed. A study without one has no figure to show.
func anyMeasured(runs []results.Run) bool {
	for _, r := range runs {
		if r.Status == results.RunOK || r.Ops > 0 || r.DurationS > 0 {
			return true
		}
		for _, iv := range r.Timeline {
			if iv.Phase == string(driver.Measured) {
				return true
			}
		}
	}
	return false
}

// resumeStudy finds an interrupted study to resume and its study text: the
// stored one, or the file given, which must be the same study. A study of a
// target server needs the file, since its stored text lacks the password.
func resumeStudy(ctx context.Context, resultsDir, id string, a []string, cat *catalog.Catalog) (*study.Study, *results.Study, error) {
	store, err := results.OpenReadOnly(resultsDir)
	if err != nil {
		return nil, nil, err
	}
	defer store.Close()
	prev, err := store.Study(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if err := runner.Resumable(prev); err != nil {
		return nil, nil, err
	}
	if len(a) == 0 {
		if prev.Target != "" {
			return nil, nil, fmt.Errorf("study %s measured a target server whose password is not stored: give its study file too (tierbench run STUDY.yaml --resume %s)", prev.ID, prev.ID)
		}
		st, err := study.Parse(prev.Name+" (stored)", []byte(prev.Source), cat)
		return st, prev, err
	}
	st, err := study.ParseFile(a[0], cat)
	if err != nil {
		return nil, nil, err
	}
	if src := engine.RedactTargetIn(st.Source, st.Target); src != prev.Source {
		return nil, nil, fmt.Errorf("%s is not the study %s was run with: resume runs the same study text (omit the file to use the stored one)", a[0], prev.ID)
	}
	return st, prev, nil
}

// explainRun is the bottleneck sentence printed after each run; the stored
// run carries only its telemetry, and show computes the sentence again.
func explainRun(r *results.Run, st *results.Study) string { return stats.Attribute(r, st).Text }

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
	src, note := study.DefaultFor(ram, filepath.Join(abs, "disk-tier"))
	if note != "" {
		fmt.Fprintln(os.Stderr, note)
	}
	return study.Parse("(default study)", []byte(src), cat)
}

func newValidateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate STUDY.yaml",
		Short: "Check a study file without running anything",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			return interruptible(cmd.Context(), func() error { return validate(cmd.Context(), a[0]) })
		},
	}
}

// validate makes every check run makes before measuring, and says what
// the study would run. The study's bounds (study.MaxRuns, MaxStudyTime)
// keep its counts and times from overflowing.
func validate(ctx context.Context, path string) error {
	cat := catalog.Default()
	st, err := study.ParseFile(path, cat)
	if err != nil {
		return badInput(err)
	}
	if err := study.Preflight(st, cat, tier.StateDir()); err != nil {
		return badInput(err)
	}
	if err := checkCluster(ctx, st); err != nil {
		return badInput(err)
	}
	printTierNotes(os.Stdout, st)
	drivers := ""
	if len(st.Drivers) > 1 {
		drivers = fmt.Sprintf(" x %d drivers", len(st.Drivers))
	}
	if n := len(st.Variants()); n > 1 {
		drivers += fmt.Sprintf(" x %d swept combinations", n)
	}
	var measuring time.Duration
	for _, c := range st.Round(1) {
		measuring += st.WarmupIn(c) + st.Duration
	}
	runs, took := fmt.Sprintf("%d runs", st.RoundSize()*st.Repeat), fmt.Sprintf("about %s of measuring", measuring*time.Duration(st.Repeat))
	if st.SLO != nil {
		// A search's steps are not known before it runs.
		steps := runner.SearchSteps(st.Repeat)
		runs = fmt.Sprintf("a capacity search of each of %d cells a round, about %d steps each over the rounds", st.RoundSize(), steps)
		took = fmt.Sprintf("about %s of measuring", measuring*time.Duration(steps))
	}
	if a := st.Adaptive; a != nil {
		runs = fmt.Sprintf("%d to %d runs", st.RoundSize()*a.Min, st.RoundSize()*st.Repeat)
		took = fmt.Sprintf("about %s of measuring a round", measuring)
		if a.Budget > 0 && measuring*time.Duration(a.Min) > a.Budget {
			fmt.Printf("note: repeat min %d rounds take at least %s of measuring, more than the budget of %s: the budget binds only from round min on\n",
				a.Min, measuring*time.Duration(a.Min), a.Budget)
		}
	}
	fmt.Printf("%s: ok: %s (%d placements%s x %d durability x %d client counts x %s), %s\n",
		path, runs, len(st.Placements), drivers, len(st.Durability), len(st.Clients), st.RoundsText(), took)
	return nil
}

// printTierNotes says which tiers were given through a symlink and the real
// folder tierbench uses (and records) instead, what of each tier's
// profile is not applied, and warns of a profile faster than the FUSE
// layer's floor (measured by tierbench probe --floor, else assumed).
func printTierNotes(w io.Writer, st *study.Study) {
	for _, t := range st.Tiers {
		if t.Given != "" {
			fmt.Fprintf(w, "note: tier %s: %s is a symlink; tierbench uses and records the real folder %s\n", t.Name, t.Given, t.Path)
		}
	}
	for _, n := range st.ProfileNotes() {
		fmt.Fprintln(w, "note: "+n)
	}
	floor, err := probe.LoadFloor(tier.StateDir())
	if err != nil {
		fmt.Fprintf(w, "note: %v; the assumed floor is used\n", err)
	}
	for _, t := range st.Tiers {
		if t.Profile == nil {
			continue
		}
		if b := probe.BelowText(*t.Profile, floor, t.Stack.Latency.Path); b != "" {
			fmt.Fprintf(w, "warning: tier %s: %s\n", t.Name, b)
		}
	}
}

func newListCmd() *cobra.Command {
	var resultsDir string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List stored studies, newest first (exit 4 when there are none)",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir := absResults(resultsDir)
			store, err := results.OpenReadOnly(dir)
			if err != nil {
				return storedOrBad(err)
			}
			defer store.Close()
			studies, err := store.Studies(cmd.Context())
			if err != nil {
				return err
			}
			if len(studies) == 0 {
				return &exitError{code: exitNothingStored, err: fmt.Errorf("no studies in %s yet: run one with `tierbench run`, or pass --results DIR", dir)}
			}
			fmt.Printf("studies in %s, newest first:\n", dir)
			report.List(os.Stdout, studies)
			return nil
		},
	}
	cmd.Flags().StringVar(&resultsDir, "results", defaultResults, "results directory")
	return cmd
}

// absResults is the results folder as messages name it: absolute, so a
// command run from another folder says where it looked.
func absResults(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

func newShowCmd() *cobra.Command {
	var resultsDir, format string
	var wide bool
	cmd := &cobra.Command{
		Use:   "show [STUDY_ID|latest]",
		Short: "Show a stored study: per durability and clients, each placement's throughput and ratio to the baseline (exit 4 when none is stored)",
		Args:  args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if format != "table" && format != "json" && format != "csv" {
				return badInput(fmt.Errorf("unknown --format %q: use table, json or csv", format))
			}
			// show changes nothing: on SIGINT or SIGTERM it stops where it is.
			return interruptible(cmd.Context(), func() error {
				store, st, runs, err := loadStudy(cmd.Context(), resultsDir, a)
				if err != nil {
					return err
				}
				defer store.Close()
				switch format {
				case "json":
					return report.JSON(os.Stdout, st, runs)
				case "csv":
					return results.WriteCSV(os.Stdout, runs)
				}
				if err := report.ShowWith(os.Stdout, st, runs, report.ShowOptions{Wide: wide}); err != nil {
					return err
				}
				fmt.Printf("\nstored in %s (tierbench list shows every study there)\n", store.Dir())
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&resultsDir, "results", defaultResults, "results directory")
	cmd.Flags().StringVar(&format, "format", "table", "output format: table, json (with per-group statistics) or csv (one row per run)")
	cmd.Flags().BoolVar(&wide, "wide", false, "every column of the table (each figure's CI, cv, p50, rounds, raw and adjusted p, disturbed runs); without it the text fits 120 columns")
	return cmd
}

func newWorkloadsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "workloads [NAME]",
		Short: "List workloads and their parameters, and the drivers that can run them (with NAME: that workload alone)",
		Args:  args(cobra.MaximumNArgs(1)),
		RunE: func(_ *cobra.Command, a []string) error {
			cat := catalog.Default()
			if len(a) == 1 {
				w, ok := cat.Workload(a[0])
				if !ok {
					return badInput(fmt.Errorf("unknown workload %q: the workloads are %s; see `tierbench workloads`", a[0], strings.Join(cat.WorkloadNames(), ", ")))
				}
				fmt.Print(workload.Describe(w))
				fmt.Println(workloadFits(cat, w))
				return nil
			}
			for _, n := range cat.WorkloadNames() {
				w, _ := cat.Workload(n)
				fmt.Println(workload.Describe(w))
			}
			fmt.Println("drivers (driver: in a study; a list makes the driver an axis of the matrix):")
			fmt.Printf("    %-10s tierbench's own: one connection per client, HDR histograms in ns, open or closed loop (the default)\n", tool.Builtin)
			fmt.Printf("    %-10s tierbench's own with its clients on N lanes (goroutines; 0: one per client), where one per CPU is the default\n", "builtin:lanes=N")
			for _, n := range cat.ToolNames() {
				t, _ := cat.Tool(n)
				fmt.Printf("    %-10s %s\n", t.Name, t.Doc)
			}
			return nil
		},
	}
}

// workloadFits says which engines serve workload w's data model and which
// standard tools can drive it, for `workloads NAME`.
func workloadFits(cat *catalog.Catalog, w workload.Spec) string {
	var engines []string
	for _, n := range cat.EngineNames() {
		if s, ok := cat.EngineSpec(n); ok && (w.Model == "" || len(s.Models) == 0 || s.Serves(w.Model)) {
			engines = append(engines, n)
		}
	}
	drivers := []string{}
	if w.Driver == "" {
		drivers = append(drivers, tool.Builtin)
	}
	for _, n := range cat.ToolNames() {
		t, _ := cat.Tool(n)
		var with []string
		for _, e := range engines {
			if t.Check != nil && t.Check(e, w.Name) == nil {
				with = append(with, e)
			}
		}
		if len(with) > 0 {
			drivers = append(drivers, fmt.Sprintf("%s (with %s)", t.Name, strings.Join(with, ", ")))
		}
	}
	return fmt.Sprintf("    engines: %s\n    drivers: %s", strings.Join(engines, ", "), strings.Join(drivers, ", "))
}

func newEnginesCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "engines [NAME]",
		Short: "List engines with their components, durability modes and options (with NAME: that engine alone)",
		Args:  args(cobra.MaximumNArgs(1)),
		RunE: func(_ *cobra.Command, a []string) error {
			cat := catalog.Default()
			names := cat.EngineNames()
			if len(a) == 1 {
				if _, ok := cat.EngineSpec(a[0]); !ok {
					return badInput(fmt.Errorf("unknown engine %q: the engines are %s; see `tierbench engines`", a[0], strings.Join(names, ", ")))
				}
				names = a
			}
			for i, n := range names {
				s, _ := cat.EngineSpec(n)
				if i > 0 {
					fmt.Println()
				}
				// What a study may write under options: the engine's own,
				// and the run setting memory for a server.
				s.Options = study.OptionSettings(s)
				fmt.Print(engine.Describe(s))
			}
			return nil
		},
	}
}

// isTerminal reports whether f is a terminal, for colour and progress bars.
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// terminalWidth is f's width in columns, 0 when unknown.
func terminalWidth(f *os.File) int {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}

func newCleanupCmd() *cobra.Command {
	var check bool
	cmd := &cobra.Command{
		Use:   "cleanup",
		Short: "Undo what a killed tierbench left: mounts, loop devices, images, run folders",
		Long: `cleanup undoes what a killed tierbench left in the ledger of its state
folder (TIERBENCH_STATE_DIR): mounts, loop devices, images, run folders,
server processes, cluster objects. What a running tierbench recorded is
its own to undo, and is left alone.

With --check it also fails (exit 1) when it found anything: something it
undid, something a running tierbench still holds, or a node that still
runs on this machine. CI ends with it, so a test that left a node, a
server or a mount behind fails the build instead of disturbing the next.`,
		Args: args(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			ledger, err := tier.OpenLedger(tier.StateDir())
			if err != nil {
				return err
			}
			// The kinds of packages above tier (killed studies, marked
			// interrupted; rbd images; cluster objects) are registered
			// with tier by the runner and the packages it links in.
			done, err := ledger.Cleanup()
			for _, r := range done {
				fmt.Println("undone: " + r.String())
			}
			if err != nil {
				return fmt.Errorf("cleanup: %w", err)
			}
			var held []string
			if check {
				if held, err = stillHeld(ledger); err != nil {
					return fmt.Errorf("cleanup --check: %w", err)
				}
				for _, h := range held {
					fmt.Println("still there: " + h)
				}
			}
			if len(done) == 0 && len(held) == 0 {
				fmt.Println("nothing to clean up")
				return nil
			}
			if check {
				return &exitError{code: exitRunsFailed, err: fmt.Errorf("cleanup --check: %d left behind (%d undone now, %d still there), state folder %s",
					len(done)+len(held), len(done), len(held), ledger.Dir())}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&check, "check", false, "exit 1 when anything was left: undone now, still held by a running tierbench, or a node still running")
	return cmd
}

// stillHeld names what cleanup leaves because its owner runs: the
// ledger's records of live processes, and the machine's node.
func stillHeld(ledger *tier.Ledger) ([]string, error) {
	all, err := ledger.All()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range all {
		out = append(out, fmt.Sprintf("%s (recorded by running process %d)", r, r.Owner))
	}
	if info, ok := node.Running(); ok {
		out = append(out, fmt.Sprintf("a node runs on this machine (pid %d, kubeconfig %s): tierbench cluster down", info.PID, info.Kubeconfig))
	}
	return out, nil
}

// loadStudy opens the results store and loads the study named by args
// (an id, an id prefix or "latest"; none means latest) with its runs. The
// caller closes the store. Nothing stored exits 4, an ambiguous id 2.
func loadStudy(ctx context.Context, resultsDir string, args []string) (*results.Store, *results.Study, []results.Run, error) {
	ref := "latest"
	if len(args) == 1 {
		ref = args[0]
	}
	store, err := results.OpenReadOnly(absResults(resultsDir))
	if err != nil {
		return nil, nil, nil, storedOrBad(err)
	}
	st, err := store.Study(ctx, ref)
	if err == nil {
		var runs []results.Run
		if runs, err = store.Runs(ctx, st.ID); err == nil {
			return store, st, runs, nil
		}
	}
	store.Close()
	return nil, nil, nil, storedOrBad(err)
}
