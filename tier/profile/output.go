package profile

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteText writes each profile's figures, durability, source and what is
// assumed, as `tierbench profiles` shows them.
func WriteText(w io.Writer, ps []Profile) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROFILE\tREAD p50/p99\tWRITE p50/p99\tFSYNC p50/p99\tIOPS R/W\tMiB/s R/W\tDURABLE")
	for _, p := range ps {
		l := p.Latency
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, pair(l.Read), pair(l.Write), pair(l.Fsync),
			rates(p.IOPS), rates(p.Bandwidth), p.Durability)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write profiles: %w", err)
	}
	for _, p := range ps {
		fmt.Fprintf(w, "\n%s: %s\n  source: %s\n", p.Name, p.Device, p.Source)
		if p.Assumed != "" {
			fmt.Fprintf(w, "  assumed: %s\n", p.Assumed)
		}
		if p.File != "" {
			fmt.Fprintf(w, "  file: %s\n", p.File)
		}
	}
	return nil
}

// WriteJSON writes {"profiles": [...]}, latencies in nanoseconds.
func WriteJSON(w io.Writer, ps []Profile) error {
	if ps == nil {
		ps = []Profile{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(struct {
		Profiles []Profile `json:"profiles"`
	}{ps}); err != nil {
		return fmt.Errorf("write profiles JSON: %w", err)
	}
	return nil
}

// pair is "p50/p99" of an operation, "-" when not given.
func pair(o Op) string {
	if o.P50 == 0 {
		return "-"
	}
	return Short(time.Duration(o.P50)) + "/" + Short(o.Tail())
}

func rates(r Rates) string {
	f := func(v float64) string {
		if v == 0 {
			return "-"
		}
		return fmt.Sprintf("%.0f", v)
	}
	if r.Read == 0 && r.Write == 0 {
		return "-"
	}
	return f(r.Read) + "/" + f(r.Write)
}

// Short writes a latency with three significant digits at most: 9µs,
// 11.6ms.
func Short(d time.Duration) string {
	us := float64(d) / 1e3
	switch {
	case us >= 1000:
		return trim(fmt.Sprintf("%.3g", us/1000)) + "ms"
	case us >= 1:
		return trim(fmt.Sprintf("%.3g", us)) + "µs"
	}
	return fmt.Sprintf("%dns", d.Nanoseconds())
}

func trim(s string) string {
	if strings.Contains(s, "e") {
		var f float64
		fmt.Sscan(s, &f)
		return fmt.Sprintf("%.0f", f)
	}
	return s
}

// RowsText is fidelity rows in one line, for a study's report: each
// figure asked / achieved and the error.
func RowsText(rows []Row) string {
	parts := make([]string, len(rows))
	for i, r := range rows {
		parts[i] = fmt.Sprintf("%s %s/%s (%+.0f%%)", r.Figure, num(r.Asked), num(r.Achieved), 100*r.Error)
	}
	return "asked/achieved: " + strings.Join(parts, ", ")
}

func num(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
