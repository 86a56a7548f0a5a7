package main

// compare: studies, or parts of one study, side by side with 95% CIs, and
// with --fail-on a regression gate for CI jobs (docs/regression-gate.md).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tierbench/tierbench/report"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/stats"
)

func newCompareCmd() *cobra.Command {
	var resultsDir, placements, durability, format, failOn, toleranceText string
	var force bool
	var tolerance float64
	cmd := &cobra.Command{
		Use:   "compare STUDY_A STUDY_B [STUDY_C ...] | compare STUDY --placements BASE,OTHER[,...] | compare STUDY --durability BASE,OTHER[,...]",
		Short: "Compare studies (the first is the baseline), or placements or durability modes of one study, with 95% CIs; --fail-on gates a CI job",
		Args:  args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if format != "table" && format != "json" {
				return badInput(fmt.Errorf("unknown --format %q: use table or json", format))
			}
			if err := gateFlagsGiven(cmd, failOn, toleranceText); err != nil {
				return badInput(err)
			}
			if toleranceText != "" {
				t, err := gateTolerance(toleranceText, failOn)
				if err != nil {
					return badInput(err)
				}
				tolerance = t
			}
			if failOn != "" {
				if _, err := stats.JudgeGate(nil, failOn, tolerance); err != nil {
					return badInput(err) // an unknown condition, named with the known ones
				}
			}
			// compare changes nothing: on SIGINT or SIGTERM it stops where it is.
			err := interruptible(cmd.Context(), func() error {
				return compare(cmd.Context(), resultsDir, a, placements, durability, format, failOn, tolerance, force)
			})
			var ee *exitError
			if failOn != "" && err != nil && !errors.As(err, &ee) {
				// Under the gate, 1 means a regression and nothing else.
				return &exitError{code: exitGateError, err: fmt.Errorf("%w; the gate judged nothing", err)}
			}
			return err
		},
	}
	cmd.Flags().StringVar(&resultsDir, "results", defaultResults, "results directory")
	cmd.Flags().StringVar(&placements, "placements", "", "with one study: the placements to compare, baseline first (placement/driver when the study ran several drivers)")
	cmd.Flags().StringVar(&durability, "durability", "", "with one study: the durability modes to compare on each placement, baseline first, e.g. async,sync")
	cmd.Flags().BoolVar(&force, "force", false, "compare studies even if engine, workload, record count or host differ")
	cmd.Flags().StringVar(&format, "format", "table", "output format: table or json")
	cmd.Flags().StringVar(&toleranceText, "tolerance", "", "with --fail-on worse: fail only on a regression whose whole 95% CI lies beyond this, e.g. 5%")
	cmd.Flags().StringVar(&failOn, "fail-on", "", "a regression gate: exit 1 when any comparison is worse (worse) or not judged equivalent (not-equivalent), naming each; errors then exit 2, 4 or 5, never 1")
	return cmd
}

// compare prints the comparison the arguments name and, with failOn,
// judges it as a regression gate: a failed gate exits exitGateFailed.
func compare(ctx context.Context, resultsDir string, a []string, placements, durability, format, failOn string, tolerance float64, force bool) error {
	store, err := results.OpenReadOnly(absResults(resultsDir))
	if err != nil {
		return storedOrBad(err)
	}
	defer store.Close()
	base, contenders, err := compareSides(ctx, store, a, placements, durability, force)
	if err != nil {
		return err
	}
	rows := stats.Compare(base, contenders)
	if len(rows) == 0 {
		return badInput(errors.New("nothing to compare: the two sides share no placement x durability x clients group with ok runs"))
	}
	// The gate's lines follow the table; beside JSON they go to stderr,
	// so that stdout stays one document.
	gateOut := os.Stdout
	if format == "json" {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			Baseline string      `json:"baseline"`
			Rows     []stats.Row `json:"rows"`
		}{base.Label, rows}); err != nil {
			return err
		}
		gateOut = os.Stderr
	} else {
		report.CompareTable(os.Stdout, base.Label, rows, isTerminal(os.Stdout))
	}
	if failOn == "" {
		return nil
	}
	gate, err := stats.JudgeGate(rows, failOn, tolerance)
	if err != nil {
		return badInput(err)
	}
	fmt.Fprintln(gateOut)
	report.GateText(gateOut, base.Label, gate)
	if !gate.Passed() {
		return &exitError{code: exitGateFailed, err: fmt.Errorf("regression gate failed: %d of %d comparisons %s (--fail-on %s)",
			len(gate.Failed), gate.Rows, gate.Condition(), failOn)}
	}
	return nil
}

// compareSides loads the sides of a comparison from the command's arguments.
func compareSides(ctx context.Context, store *results.Store, refs []string, placements, durability string, force bool) (stats.Side, []stats.Side, error) {
	load := func(ref string) (*results.Study, []results.Run, error) {
		st, err := store.Study(ctx, ref)
		if err != nil {
			return nil, nil, storedOrBad(err)
		}
		runs, err := store.Runs(ctx, st.ID)
		st, runs = results.SeriesView(st, runs) // placement/driver pairs are placements here
		return st, runs, err
	}
	if placements != "" && durability != "" {
		return stats.Side{}, nil, badInput(errors.New("give --placements or --durability, not both"))
	}
	if durability != "" {
		return byDurability.sides(refs, durability, load)
	}
	if placements != "" {
		return byPlacement.sides(refs, placements, load)
	}
	if len(refs) < 2 {
		return stats.Side{}, nil, badInput(errors.New("give two or more studies (the first is the baseline), or one study with --placements"))
	}
	baseSt, baseRuns, err := load(refs[0])
	if err != nil {
		return stats.Side{}, nil, err
	}
	var contenders []stats.Side
	for _, ref := range refs[1:] {
		st, runs, err := load(ref)
		if err != nil {
			return stats.Side{}, nil, err
		}
		if why := stats.Comparable(baseSt, st); len(why) > 0 && !force {
			return stats.Side{}, nil, badInput(fmt.Errorf("refusing to compare: %s; pass --force to compare anyway", strings.Join(why, "; ")))
		}
		contenders = append(contenders, stats.StudySide(st.ID, st, runs, ""))
	}
	return stats.StudySide(baseSt.ID, baseSt, baseRuns, ""), contenders, nil
}

// withinStudy compares parts of ONE study named by a flag (its
// placements, its durability modes), the first the baseline.
type withinStudy struct {
	flag, parts, example string
	// missing says why st has no part name, "" when it has.
	missing func(st *results.Study, name string) string
	side    func(st *results.Study, runs []results.Run, name string) stats.Side
}

var (
	byPlacement = withinStudy{flag: "--placements", parts: "placements", example: "all-disk,wal-ram",
		missing: func(st *results.Study, name string) string {
			if slices.ContainsFunc(st.Placements, func(p results.Placement) bool { return p.Name == name }) {
				return ""
			}
			return fmt.Sprintf("study %s has no placement %q", st.ID, name)
		},
		side: func(st *results.Study, runs []results.Run, name string) stats.Side {
			return stats.StudySide(name, st, runs, name)
		}}
	byDurability = withinStudy{flag: "--durability", parts: "durability modes", example: "async,sync",
		missing: func(st *results.Study, mode string) string {
			if slices.Contains(st.Durability, mode) {
				return ""
			}
			return fmt.Sprintf("study %s has no durability %q (it ran: %s)", st.ID, mode, strings.Join(st.Durability, ", "))
		},
		side: stats.DurabilitySide}
)

// sides loads the one study of refs and makes a side of each part list
// names, the first the baseline.
func (w withinStudy) sides(refs []string, list string, load func(string) (*results.Study, []results.Run, error)) (stats.Side, []stats.Side, error) {
	if len(refs) != 1 {
		return stats.Side{}, nil, badInput(fmt.Errorf("%s compares %s of ONE study: give one study id", w.flag, w.parts))
	}
	names := strings.Split(list, ",")
	if len(names) < 2 {
		return stats.Side{}, nil, badInput(fmt.Errorf("%s needs at least two %s, baseline first, e.g. %s %s", w.flag, w.parts, w.flag, w.example))
	}
	st, runs, err := load(refs[0])
	if err != nil {
		return stats.Side{}, nil, err
	}
	var sides []stats.Side
	for _, n := range names {
		if why := w.missing(st, n); why != "" {
			return stats.Side{}, nil, badInput(errors.New(why))
		}
		sides = append(sides, w.side(st, runs, n))
	}
	return sides[0], sides[1:], nil
}

// gateFlagsGiven refuses --fail-on or --tolerance given with an empty
// value: in CI that is a variable left unset (--fail-on "$GATE"), and
// taking it as "no gate" would pass every job without judging anything.
func gateFlagsGiven(cmd *cobra.Command, failOn, tolerance string) error {
	switch {
	case cmd.Flags().Changed("fail-on") && failOn == "":
		return fmt.Errorf("--fail-on is empty (a CI variable left unset?), which would judge nothing: give --fail-on %s, or leave the flag out for no gate", strings.Join(stats.FailOnValues, " or --fail-on "))
	case cmd.Flags().Changed("tolerance") && toleranceEmpty(tolerance):
		return errors.New("--tolerance is empty (a CI variable left unset?): give a percentage such as --tolerance 5%, or leave the flag out for no tolerance")
	}
	return nil
}

// toleranceEmpty is a --tolerance of nothing but spaces.
func toleranceEmpty(v string) bool { return strings.TrimSpace(v) == "" }

// gateTolerance reads --tolerance: a percentage, with --fail-on worse.
func gateTolerance(v, failOn string) (float64, error) {
	num, ok := strings.CutSuffix(strings.TrimSpace(v), "%")
	f, err := strconv.ParseFloat(num, 64)
	switch {
	case !ok || err != nil || math.IsNaN(f) || math.IsInf(f, 0):
		return 0, fmt.Errorf("--tolerance %q is not a percentage; write e.g. --tolerance 5%%", v)
	case failOn == "":
		return 0, errors.New("--tolerance is the regression gate's; add --fail-on worse or remove --tolerance")
	}
	return f / 100, nil
}
