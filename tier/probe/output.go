package probe

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/tierbench/tierbench/tier/profile"
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
// Every figure carries its unit, as fio's own output does: IOPS of 4k
// random reads and writes at queue depth 1 and 32, 1 MiB sequential
// read and write bandwidth, fdatasync latency p50 and p99, and the sync
// ceiling (synced commits per second for one writer).
func WriteTable(w io.Writer, tiers []Tier) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "PATH\tFS\tDEVICE\tDURABLE\tDAX\tRAND READ QD1\tRAND READ QD32\tRAND WRITE QD1\tRAND WRITE QD32\tSEQ READ\tSEQ WRITE\tFSYNC p50\tFSYNC p99\tSYNC CEILING\t")
	for _, t := range tiers {
		row := []string{t.Path, orDash(t.FSType), orDash(t.Device), yesNo(t.Durable), yesNo(t.DAX)}
		if f := t.Fio; f != nil {
			row = append(row,
				iops(f.RandReadQD1.IOPS), iops(f.RandReadQD32.IOPS),
				iops(f.RandWriteQD1.IOPS), iops(f.RandWriteQD32.IOPS),
				bandwidth(f.SeqReadMBps), bandwidth(f.SeqWriteMBps),
				latency(f.FsyncLat.P50), latency(f.FsyncLat.P99),
				count(f.SyncCeilingPerS)+" syncs/s")
		} else {
			row = append(row, "-", "-", "-", "-", "-", "-", "-", "-", "-")
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
		if t.AtomicWrite != "" && t.Error == "" {
			fmt.Fprintf(w, "%s: %s\n", t.Path, t.AtomicWrite)
		}
	}
}

// iops is an I/O rate with its unit: 12.5k IOPS.
func iops(v float64) string { return count(v) + " IOPS" }

// bandwidth is a rate in MB/s with its unit, in GB/s from 1000 MB/s on.
func bandwidth(mbps float64) string {
	if mbps >= 1000 {
		return sig3(mbps/1000) + " GB/s"
	}
	return sig3(mbps) + " MB/s"
}

// latency is a latency given in µs with its unit, in ms or s when large;
// fast tiers answer in fractions of a µs.
func latency(us float64) string {
	switch {
	case us >= 1e6:
		return sig3(us/1e6) + " s"
	case us >= 1000:
		return sig3(us/1000) + " ms"
	}
	return sig3(us) + " µs"
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

// Report is what `tierbench probe` prints as JSON: the probed tiers, and
// with --floor or --profile the FUSE floor, with --profile the profile's
// figures asked against achieved (fidelity) and what was not applied.
type Report struct {
	Tiers      []Tier        `json:"tiers"`
	Floor      *Floor        `json:"floor,omitempty"`
	Profile    string        `json:"profile,omitempty"`
	Fidelity   []profile.Row `json:"fidelity,omitempty"`
	NotApplied []string      `json:"not_applied,omitempty"`
	BelowFloor string        `json:"below_floor,omitempty"`
}

// WriteReport writes rep as JSON; tiers is [] rather than null.
func WriteReport(w io.Writer, rep Report) error {
	if rep.Tiers == nil {
		rep.Tiers = []Tier{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rep); err != nil {
		return fmt.Errorf("write probe JSON: %w", err)
	}
	return nil
}
