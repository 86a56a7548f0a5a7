// Command tierbench measures what placing each part of a database on a
// faster storage tier buys. This file and its siblings only bind flags to
// library calls and map errors to exit codes.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/tierbench/tierbench/host/userfile"
	"github.com/tierbench/tierbench/hostenv"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/study"
)

// Exit codes, documented in README.md and docs/runs-and-results.md.
const (
	exitOK         = 0
	exitRunsFailed = 1
	exitBadInput   = 2
	// exitNothingMeasured: run measured nothing (its tiers could not be
	// made, or every run failed before its measured window), which a
	// script must not take for "some runs failed".
	exitNothingMeasured = 3
	// exitNothingStored: list, show, report and compare found no study in
	// the results folder (none there, or no such id).
	exitNothingStored = 4
	// exitGateFailed: compare --fail-on found a comparison that fails the
	// gate (worse, or not equivalent). Under --fail-on, compare exits 1
	// for nothing else, so a CI job can tell a regression from an error.
	exitGateFailed = 1
	// exitGateError: compare --fail-on could not judge, for an error that
	// is neither bad input (2) nor nothing stored (4): the results store
	// could not be read.
	exitGateError = 5
	exitInterrupt = 130
)

// exitError carries an exit code to main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// badInput marks an error as the user's to fix (exit 2).
func badInput(err error) error { return &exitError{code: exitBadInput, err: err} }

// storedOrBad maps a failed look-up in the results store: nothing stored
// (no store, no study, no such id: exit 4), an ambiguous id (exit 2), or
// the error as it is.
func storedOrBad(err error) error {
	switch {
	case errors.Is(err, results.ErrAmbiguous):
		return badInput(err)
	case errors.Is(err, results.ErrNoStudy):
		return &exitError{code: exitNothingStored, err: err}
	}
	return err
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRoot()
	root.SetArgs(os.Args[1:])
	stopProfile := startProfile()
	err := root.ExecuteContext(ctx)
	stopProfile()
	os.Exit(exitCode(err))
}

// exitCode prints err and maps it to an exit code.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	code := exitRunsFailed
	var nu *userfile.NotUsableError
	switch {
	case errors.As(err, &ee):
		code = ee.code
	case errors.As(err, &nu):
		code = exitBadInput // a path the user named that cannot be used
	}
	var probs study.Problems
	if errors.As(err, &probs) {
		// One line per problem, each naming its file and line.
		fmt.Fprintln(os.Stderr, probs.Error())
		fmt.Fprintf(os.Stderr, "tierbench: %d problem(s) in the study; nothing was run\n", len(probs))
		return exitBadInput
	}
	fmt.Fprintln(os.Stderr, "tierbench: "+err.Error())
	return code
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "tierbench",
		Short: "Measure what each storage tier buys each part of a database",
		Long: `tierbench runs a storage-placement study: it puts each component of a real
engine (data, WAL, ...) on a chosen tier, runs a standard workload across
client counts and durability modes, stores every run, and compares every
placement with the baseline.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       hostenv.Version(),
	}
	root.SetVersionTemplate(fmt.Sprintf("tierbench {{.Version}} (%s, %s/%s)\n", runtime.Version(), runtime.GOOS, runtime.GOARCH))
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return badInput(err) })
	root.AddCommand(newRunCmd(), newValidateCmd(), newListCmd(), newShowCmd(), newCompareCmd(), newExportCmd(), newReportCmd(), newWorkloadsCmd(), newEnginesCmd(), newCleanupCmd(), newProbeCmd(), newProfilesCmd(), newDriveCmd(), newRenderCmd(), newClusterCmd(), newPauseCmd(), newInitCmd())
	root.SetHelpCommand(newHelpCmd())
	root.InitDefaultCompletionCmd() // now, so that it too refuses unknown shells
	refuseUnknownCommands(root)
	return root
}

// refuseUnknownCommands makes every command that only groups others (the
// root, cluster, completion) refuse an unknown subcommand with exit 2:
// cobra would print the group's help and exit 0, so `tierbench cluster
// start` would look done. Alone, such a command prints its help.
func refuseUnknownCommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		refuseUnknownCommands(sub)
	}
	if !c.HasSubCommands() || c.Runnable() {
		return
	}
	c.SuggestionsMinimumDistance = 2 // cobra's own default
	c.Args = func(cmd *cobra.Command, a []string) error {
		if len(a) == 0 {
			return nil
		}
		var known []string
		for _, sub := range cmd.Commands() {
			if sub.IsAvailableCommand() {
				known = append(known, sub.Name())
			}
		}
		hint := ""
		if s := cmd.SuggestionsFor(a[0]); len(s) > 0 {
			hint = fmt.Sprintf("; did you mean %q?", s[0])
		}
		return badInput(fmt.Errorf("unknown command %q for %q%s (its commands: %s); see `%s --help`",
			a[0], cmd.CommandPath(), hint, strings.Join(known, ", "), cmd.CommandPath()))
	}
	c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
}

// newHelpCmd is cobra's help command, but an unknown topic exits 2 as an
// unknown command does, rather than printing the usage and exiting 0.
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		RunE: func(c *cobra.Command, a []string) error {
			cmd, rest, err := c.Root().Find(a)
			if err != nil || len(rest) > 0 {
				return badInput(fmt.Errorf("unknown help topic %q; see `tierbench --help` for the commands", strings.Join(a, " ")))
			}
			return cmd.Help()
		},
	}
}

// interruptible runs fn, a command's work that writes nothing (validate,
// show), until it ends or ctx is cancelled by SIGINT or SIGTERM, and then
// returns at once: main exits, ending fn wherever it was (parsing, a
// blocked read, a wait on a locked store), with nothing left to undo.
func interruptible(ctx context.Context, fn func() error) error {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return &exitError{code: exitInterrupt, err: errors.New("interrupted; nothing was written")}
	}
}

// args wraps a cobra positional-argument check so a wrong count exits 2.
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if err := check(cmd, a); err != nil {
			return badInput(fmt.Errorf("%w; see `%s --help`", err, cmd.CommandPath()))
		}
		return nil
	}
}

// startProfile writes a CPU profile of the whole command to the file named
// by TIERBENCH_CPUPROFILE, for finding the driver's own overhead.
func startProfile() (stop func()) {
	path := os.Getenv("TIERBENCH_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "warning: TIERBENCH_CPUPROFILE:", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "warning: TIERBENCH_CPUPROFILE:", err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
