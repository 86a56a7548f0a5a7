package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/spf13/cobra"

	"github.com/tierbench/tierbench/host/userfile"
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
				// A folder given as -o is said as such, before its name
				// is read for a format.
				t, err := checkOutput(out)
				if err != nil {
					return badInput(err)
				}
				if format, err = outputFormat(out, format, cmd.Flags().Changed("format")); err != nil {
					return badInput(err)
				}
				if t.Through && format == "markdown" {
					return badInput(fmt.Errorf("cannot write a Markdown report to %s: it is a device or a pipe, and a Markdown report's charts go in a folder beside its file; give a file path, or --format html", out))
				}
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

// checkOutput refuses, before anything is rendered, an output that cannot
// be written (a folder, a missing folder, a block device, a socket), and
// says whether it is written through (a device, a pipe). Links are
// followed.
func checkOutput(out string) (userfile.Target, error) {
	t, err := userfile.Resolve(out)
	if err != nil {
		return t, fmt.Errorf("cannot write the report to %w", err)
	}
	return t, nil
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

// writeReport writes the report to out as userfile does: atomically, so a
// failure leaves no half-written report, through a link to the file it
// names, and never over a device or a pipe. A Markdown report's charts go
// in a folder beside the file written.
func writeReport(out, format string, in report.Input) error {
	t, err := userfile.Resolve(out)
	if err != nil {
		return fmt.Errorf("cannot write the report to %w", err)
	}
	chartRel := strings.TrimSuffix(filepath.Base(t.Path), filepath.Ext(t.Path)) + "-charts"
	chartDir := filepath.Join(filepath.Dir(t.Path), chartRel)
	if format == "markdown" {
		if err := os.MkdirAll(chartDir, 0o755); err != nil {
			return fmt.Errorf("write report charts: %w", err)
		}
	}
	return userfile.Write(out, 0o644, func(w io.Writer) error {
		var err error
		switch format {
		case "html":
			err = report.HTML(w, in)
		case "markdown":
			err = report.Markdown(w, in, chartDir, chartRel+"/")
		}
		if err != nil {
			return fmt.Errorf("render report: %w", err)
		}
		return nil
	})
}
