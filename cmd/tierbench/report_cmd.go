package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
			if out != "" {
				// A folder given as -o is said as such, before its name is
				// read for a format.
				if err := checkOutputDir(out); err != nil {
					return badInput(err)
				}
				f, err := outputFormat(out, format, cmd.Flags().Changed("format"))
				if err != nil {
					return badInput(err)
				}
				format = f
			}
			if clients < 0 {
				return badInput(fmt.Errorf("--clients %d is negative: give a client count the study ran, or leave it out for the largest", clients))
			}
			ctx := cmd.Context()
			store, st, runs, err := loadStudy(ctx, resultsDir, a)
			if err != nil {
				return err
			}
			defer store.Close()
			if clients > 0 && !slices.Contains(st.Clients, clients) {
				return badInput(fmt.Errorf("--clients %d: study %s ran %s clients; give one of them, or leave --clients out for the largest", clients, st.ID, joinInts(st.Clients)))
			}
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
	cmd.Flags().StringVarP(&out, "output", "o", "", "output file (default tierbench-report-<study id>.html or .md); .html/.htm or .md/.markdown sets the format")
	cmd.Flags().StringVar(&format, "format", "html", "html (one self-contained file) or markdown (with SVG charts in a folder beside it); default: from -o's extension, else html")
	cmd.Flags().IntVar(&clients, "clients", 0, "client count for the verdicts and the latency chart (default: the largest)")
	return cmd
}

// formatByExt is the report format each output file extension means.
var formatByExt = map[string]string{".html": "html", ".htm": "html", ".md": "markdown", ".markdown": "markdown"}

// outputFormat is the format of a report written to out: the one its
// extension means, which an explicit --format must agree with, or, for
// another extension, the --format given. A file whose name says one
// format and holds another would open wrongly, so both are refused.
func outputFormat(out, format string, explicit bool) (string, error) {
	ext := strings.ToLower(filepath.Ext(out))
	byExt, known := formatByExt[ext]
	switch {
	case known && explicit && byExt != format:
		return "", fmt.Errorf("-o %s is a %s file name but --format is %s: name the file %s, or drop --format", out, byExt, format, strings.TrimSuffix(out, filepath.Ext(out))+map[string]string{"html": ".html", "markdown": ".md"}[format])
	case known:
		return byExt, nil
	case explicit:
		return format, nil
	}
	return "", fmt.Errorf("-o %s: cannot tell the report's format from its name; end it in .html or .md, or give --format html or --format markdown", out)
}

// checkOutputDir refuses an output file whose folder does not exist (or is
// not a folder) before anything is rendered, naming the path as given
// rather than the temporary file the report is written through.
func checkOutputDir(out string) error {
	dir := filepath.Dir(out)
	st, err := os.Stat(dir)
	switch {
	case err != nil && errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("cannot write the report to %s: folder %s does not exist; create it or give another -o", out, dir)
	case err != nil:
		return fmt.Errorf("cannot write the report to %s: %w", out, err)
	case !st.IsDir():
		return fmt.Errorf("cannot write the report to %s: %s is not a folder; give another -o", out, dir)
	}
	if fi, err := os.Stat(out); err == nil && fi.IsDir() {
		return fmt.Errorf("cannot write the report to %s: it is a folder; give a file name such as %s", out, filepath.Join(out, "report.html"))
	}
	return nil
}

// joinInts lists counts for messages: 1, 4 and 16.
func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// writeReport writes to a temporary file and renames it into place, so a
// failure leaves no half-written report.
func writeReport(out, format string, in report.Input) (err error) {
	dir := filepath.Dir(out)
	tmp, err := os.CreateTemp(dir, ".tierbench-report-*")
	if err != nil {
		// The temporary file's name means nothing to the user: name out.
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("write report to %s: %w", out, err)
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
		return fmt.Errorf("write report to %s: %w", out, err)
	}
	if err = os.Rename(tmp.Name(), out); err != nil {
		var le *os.LinkError
		if errors.As(err, &le) {
			err = le.Err
		}
		return fmt.Errorf("write report to %s: %w", out, err)
	}
	return os.Chmod(out, 0o644)
}
