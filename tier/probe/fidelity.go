package probe

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/tierbench/tierbench/tier/profile"
)

// Fidelity compares each figure of profile p with what a probe of a tier
// emulating it measured (f): QD1 read, write and fsync latency p50 and
// p99, fsync with several writers at once (when the probe measured it),
// QD32 IOPS and sequential bandwidth, wherever the profile gives the
// figure.
func Fidelity(p profile.Profile, f *Fio) []profile.Row {
	if f == nil {
		return nil
	}
	var rows []profile.Row
	add := func(figure string, asked, achieved float64) {
		if asked <= 0 {
			return
		}
		rows = append(rows, profile.Row{Figure: figure, Asked: asked, Achieved: achieved, Error: (achieved - asked) / asked})
	}
	us := func(d profile.Duration) float64 { return float64(d) / 1e3 }
	for _, o := range []struct {
		name string
		op   profile.Op
		got  Latency
	}{{"read", p.Latency.Read, f.RandReadQD1.Lat}, {"write", p.Latency.Write, f.RandWriteQD1.Lat}, {"fsync", p.Latency.Fsync, f.FsyncLat}} {
		if o.op.P50 == 0 {
			continue
		}
		add(o.name+" p50 (µs, QD1)", us(o.op.P50), o.got.P50)
		add(o.name+" p99 (µs, QD1)", float64(o.op.Tail())/1e3, o.got.P99)
	}
	for _, a := range p.FsyncAtOnce {
		if i := slices.IndexFunc(f.FsyncAtOnce, func(g SyncsAtOnce) bool { return g.Syncs == a.Syncs }); i >= 0 {
			got := f.FsyncAtOnce[i].Lat
			add(fmt.Sprintf("fsync p50 (µs, %d at once)", a.Syncs), us(a.P50), got.P50)
			add(fmt.Sprintf("fsync p99 (µs, %d at once)", a.Syncs), float64(a.Tail())/1e3, got.P99)
		}
	}
	add("read IOPS (QD32)", p.IOPS.Read, f.RandReadQD32.IOPS)
	add("write IOPS (QD32)", p.IOPS.Write, f.RandWriteQD32.IOPS)
	const mib = 1 << 20
	add("read MiB/s (sequential)", p.Bandwidth.Read, f.SeqReadMBps*1e6/mib)
	add("write MiB/s (sequential)", p.Bandwidth.Write, f.SeqWriteMBps*1e6/mib)
	return rows
}

// WriteFidelity writes the rows as a table: each figure asked, achieved
// and the error.
func WriteFidelity(w io.Writer, rows []profile.Row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "FIGURE\tASKED\tACHIEVED\tERROR\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%+.0f%%\t\n", r.Figure, sig3(r.Asked), sig3(r.Achieved), 100*r.Error)
	}
	tw.Flush()
}
