package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/spf13/cobra"

	"github.com/tierbench/tierbench/report"
	"github.com/tierbench/tierbench/stats"
)

func newReportCmd() *cobra.Command {
	var resultsDir, out, format string
	var clients int
	cmd := &cobra.Command{
		Use:   "report [STUDY_ID|latest]",
		Short: "Write a self-contained HTML (or Markdown) report of a stored study",
		Args:  args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if format != "html" && format != "markdown" {
				return badInput(fmt.Errorf("unknown --format %q: use html or markdown", format))
			}
			ctx := cmd.Context()
			store, st, runs, err := loadStudy(ctx, resultsDir, a)
			if err != nil {
				return err
			}
			defer store.Close()
			in := report.Input{Study: st, Runs: runs, Analysis: stats.Analyze(st, runs), Clients: clients,
				Histogram: func(runID, op, kind, phase string) (*hdr.Histogram, error) {
					return store.Histogram(context.WithoutCancel(ctx), runID, op, kind, phase)
				}}
			if out == "" {
				out = "tierbench-report-" + st.ID + map[string]string{"html": ".html", "markdown": ".md"}[format]
			}
			if err := writeReport(out, format, in); err != nil {
				return err
			}
			fmt.Println(out)
			return nil
		},
	}
	cmd.Flags().StringVar(&resultsDir, "results", defaultResults, "results directory")
	cmd.Flags().StringVarP(&out, "output", "o", "", "output file (default tierbench-report-<study id>.html or .md)")
	cmd.Flags().StringVar(&format, "format", "html", "html (one self-contained file) or markdown (with SVG charts in a folder beside it)")
	cmd.Flags().IntVar(&clients, "clients", 0, "client count for the verdicts and the latency chart (default: the largest)")
	return cmd
}

// writeReport writes to a temporary file and renames it into place, so a
// failure leaves no half-written report.
func writeReport(out, format string, in report.Input) (err error) {
	dir := filepath.Dir(out)
	tmp, err := os.CreateTemp(dir, ".tierbench-report-*")
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	switch format {
	case "html":
		err = report.HTML(tmp, in)
	case "markdown":
		chartRel := strings.TrimSuffix(filepath.Base(out), filepath.Ext(out)) + "-charts"
		chartDir := filepath.Join(dir, chartRel)
		if err = os.MkdirAll(chartDir, 0o755); err != nil {
			return fmt.Errorf("write report charts: %w", err)
		}
		err = report.Markdown(tmp, in, chartDir, chartRel+"/")
	}
	if err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if err = os.Rename(tmp.Name(), out); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return os.Chmod(out, 0o644)
}
