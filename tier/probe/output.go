package probe

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteJSON writes {"tiers": [...]}, the format of `tierbench probe
// --format json`. An empty list is written as [] rather than null so that
// consumers can iterate without a check.
func WriteJSON(w io.Writer, tiers []Tier) error {
	if tiers == nil {
		tiers = []Tier{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(struct {
		Tiers []Tier `json:"tiers"`
	}{tiers}); err != nil {
		return fmt.Errorf("write probe JSON: %w", err)
	}
	return nil
}

// WriteTable writes the tiers as an aligned terminal table, one tier per
// row, followed by each tier's error or note (too long for a column).
// Columns: IOPS of 4k random reads (rr) and writes (rw) at queue depth 1
// and 32, 1 MiB sequential read/write MB/s, fdatasync latency p50/p99 in
// µs, and the sync ceiling (synced commits per second for one writer).
func WriteTable(w io.Writer, tiers []Tier) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "PATH\tFS\tDEVICE\tDURABLE\tDAX\tRR QD1\tRR QD32\tRW QD1\tRW QD32\tSEQ R/W MB/s\tFSYNC p50/p99 µs\tSYNC/s\t")
	for _, t := range tiers {
		row := []string{t.Path, orDash(t.FSType), orDash(t.Device), yesNo(t.Durable), yesNo(t.DAX)}
		if f := t.Fio; f != nil {
			row = append(row,
				count(f.RandReadQD1.IOPS), count(f.RandReadQD32.IOPS),
				count(f.RandWriteQD1.IOPS), count(f.RandWriteQD32.IOPS),
				fmt.Sprintf("%s/%s", count(f.SeqReadMBps), count(f.SeqWriteMBps)),
				fmt.Sprintf("%s/%s", micros(f.FsyncLat.P50), micros(f.FsyncLat.P99)),
				count(f.SyncCeilingPerS))
		} else {
			row = append(row, "-", "-", "-", "-", "-", "-", "-")
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	tw.Flush()
	for _, t := range tiers {
		switch {
		case t.Error != "":
			fmt.Fprintf(w, "%s: error: %s\n", t.Path, t.Error)
		case t.Fio != nil && t.Fio.Note != "":
			fmt.Fprintf(w, "%s: %s\n", t.Path, t.Fio.Note)
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// count abbreviates a rate to three significant digits (812, 45.1k, 1.23M),
// enough to compare tiers that differ by orders of magnitude.
func count(v float64) string {
	switch {
	case v >= 1e6:
		return sig3(v/1e6) + "M"
	case v >= 1e3:
		return sig3(v/1e3) + "k"
	}
	return sig3(v)
}

func sig3(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// micros formats a latency in µs; fast tiers answer in fractions of one.
func micros(us float64) string {
	if us >= 1000 {
		return fmt.Sprintf("%.0f", us)
	}
	return sig3(us)
}
