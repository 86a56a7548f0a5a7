package main

// export writes a stored study's figures for spreadsheets and notebooks.
// Each kind of output has a flag of its own and an exporter below, and
// export writes every one its flags ask for: --format csv|json (with
// --what and -o) is one; HDR interval logs (--hdr DIR, export_hdr.go)
// another.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tierbench/tierbench/host/userfile"
	"github.com/tierbench/tierbench/report"
	"github.com/tierbench/tierbench/results"
)

// exportOptions are export's flags.
type exportOptions struct {
	resultsDir string
	// format (csv or json), what (the CSV table) and out (-o, stdout
	// when empty) are the --format output's.
	format, what, out string
	// hdrDir is the folder --hdr writes each run's interval log in.
	hdrDir string
}

// exported is what an exporter reads: the study, its runs, and the store
// they came from (for what runs' records do not hold, such as histograms).
type exported struct {
	store *results.Store
	study *results.Study
	runs  []results.Run
}

// exporter writes one kind of output of a loaded study.
type exporter func(ctx context.Context, ex exported) error

// csvTables are the tables --format csv writes, chosen by --what.
var csvTables = map[string]func(io.Writer, report.Document) error{
	"runs":        func(w io.Writer, doc report.Document) error { return results.WriteCSV(w, doc.Runs) },
	"groups":      report.GroupsCSV,
	"comparisons": report.ComparisonsCSV,
	"events":      func(w io.Writer, doc report.Document) error { return results.WriteEventsCSV(w, doc.Runs) },
}

func newExportCmd() *cobra.Command {
	var o exportOptions
	cmd := &cobra.Command{
		Use:   "export [STUDY_ID|latest] --format csv|json [--what runs|groups|comparisons|events] [-o FILE] [--hdr DIR]",
		Short: "Write a stored study's runs, groups and comparisons as CSV or JSON, for spreadsheets and notebooks, or its runs' latency per second as HdrHistogram interval logs (exit 4 when none is stored)",
		Long: `Write a stored study's figures, the same ones show --format json has.

--format json writes that document (runs, groups, comparisons, the answer),
which follows the JSON Schema in results/schema (docs/results-schema.md).
--format csv writes one table with a header row: --what runs (one row per
run, the default), groups (one row per placement x durability x clients,
with its ratio to the baseline and verdict) or comparisons (every
comparison the study judged, with raw and adjusted p values) or events
(one row per engine event of each run: checkpoints, flushes, compactions,
a crash run's crash and recovery, on the timeline's clock). -o FILE
writes a file (.csv or .json names the format), else standard output.

--hdr DIR writes each run's latency per second (all ops) as an
HdrHistogram interval log, DIR/RUN_ID.hlog, which HdrHistogram's own
tools read: untagged lines are the measured window, lines tagged warmup
the warmup (docs/live-metrics.md).`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			outs, err := o.exporters(cmd)
			if err != nil {
				return badInput(err)
			}
			ctx := cmd.Context()
			var ex exported
			// Reading changes nothing: on SIGINT or SIGTERM it stops where it is.
			err = interruptible(ctx, func() error {
				var err error
				ex.store, ex.study, ex.runs, err = loadStudy(ctx, o.resultsDir, a)
				return err
			})
			if err != nil {
				return err
			}
			defer ex.store.Close()
			for _, out := range outs {
				if err := out(ctx, ex); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&o.resultsDir, "results", defaultResults, "results directory")
	cmd.Flags().StringVar(&o.format, "format", "", "csv (one table, see --what) or json (the document show --format json prints); default: from -o's extension")
	cmd.Flags().StringVar(&o.what, "what", "runs", "with --format csv, the table: runs (one row per run), groups (per placement x durability x clients), comparisons (every comparison judged) or events (every engine event of each run)")
	cmd.Flags().StringVarP(&o.out, "output", "o", "", "write to this file (.csv or .json sets the format) instead of standard output")
	cmd.Flags().StringVar(&o.hdrDir, "hdr", "", "write each run's latency per second (all ops) as an HdrHistogram interval log, DIR/RUN_ID.hlog: untagged lines are the measured window, Tag=warmup lines the warmup")
	return cmd
}

// exporters are the outputs export's flags ask for, each written in turn;
// none is bad input.
func (o *exportOptions) exporters(cmd *cobra.Command) ([]exporter, error) {
	if err := o.givenEmpty(cmd); err != nil {
		return nil, err
	}
	var outs []exporter
	whatGiven := cmd.Flags().Changed("what")
	if o.format != "" || o.out != "" {
		out, err := o.tableExporter(whatGiven)
		if err != nil {
			return nil, err
		}
		outs = append(outs, out)
	}
	if cmd.Flags().Changed("hdr") {
		out, err := o.hdrExporter()
		if err != nil {
			return nil, err
		}
		outs = append(outs, out)
	}
	if whatGiven && o.format == "" && o.out == "" && len(outs) > 0 {
		return nil, errors.New("--what picks a CSV table, and only --hdr is asked for: add --format csv (or -o FILE.csv) for the table, or drop --what")
	}
	if len(outs) == 0 {
		return nil, errors.New("say what to write: --format csv (one table: --what runs, groups, comparisons or events), --format json, or --hdr DIR (HdrHistogram interval logs); see `tierbench export --help`")
	}
	return outs, nil
}

// givenEmpty refuses --what or --format given with an empty value (a
// script's variable left unset): --what "" would otherwise fall back to
// nothing it names, and --format "" to no table at all.
func (o *exportOptions) givenEmpty(cmd *cobra.Command) error {
	for _, f := range []struct{ name, value, fix string }{
		{"what", o.what, "give --what runs, groups, comparisons or events, or leave it out for runs"},
		{"format", o.format, "give --format csv or --format json, or leave it out to take the format from -o's extension"},
	} {
		if cmd.Flags().Changed(f.name) && strings.TrimSpace(f.value) == "" {
			return fmt.Errorf("--%s is empty (a variable left unset?): %s", f.name, f.fix)
		}
	}
	return nil
}

// exportFormatByExt is the format an output file's extension means.
var exportFormatByExt = map[string]string{".csv": "csv", ".json": "json"}

// tableExporter checks the --format output's flags and returns its
// exporter: the study's document, as JSON or as one CSV table.
func (o *exportOptions) tableExporter(whatGiven bool) (exporter, error) {
	if o.out != "" {
		byExt, known := exportFormatByExt[strings.ToLower(filepath.Ext(o.out))]
		switch {
		case known && o.format != "" && byExt != o.format:
			return nil, fmt.Errorf("-o %s is a %s file name but --format is %s: name the file .%s, or drop --format", o.out, byExt, o.format, o.format)
		case known:
			o.format = byExt
		case o.format == "":
			return nil, fmt.Errorf("-o %s: cannot tell the format from its name; end it in .csv or .json, or give --format csv or --format json", o.out)
		}
		if err := checkExportFile(o.out); err != nil {
			return nil, err
		}
	}
	table := csvTables[o.what]
	switch {
	case o.format != "csv" && o.format != "json":
		return nil, fmt.Errorf("unknown --format %q: use csv or json", o.format)
	case o.format == "json" && whatGiven:
		return nil, errors.New("--what picks a CSV table; --format json writes runs (with their events), groups and comparisons in one document: drop --what, or give --format csv")
	case table == nil:
		return nil, fmt.Errorf("unknown --what %q: use runs, groups, comparisons or events", o.what)
	}
	format, out := o.format, o.out
	return func(ctx context.Context, ex exported) error {
		var buf bytes.Buffer
		// Analysing writes nothing yet: an interrupt leaves no file behind.
		err := interruptible(ctx, func() error {
			if format == "json" {
				return report.JSON(&buf, ex.study, ex.runs)
			}
			return table(&buf, report.Build(ex.study, ex.runs))
		})
		if err != nil {
			return err
		}
		if out == "" {
			_, err := os.Stdout.Write(buf.Bytes())
			return err
		}
		return userfile.WriteFile(out, buf.Bytes(), 0o644)
	}, nil
}

// checkExportFile refuses, before anything is read, an output that cannot
// be written: a folder, a missing folder, a block device, a socket.
func checkExportFile(out string) error {
	if _, err := userfile.Resolve(out); err != nil {
		return fmt.Errorf("cannot write %w", err)
	}
	return nil
}
