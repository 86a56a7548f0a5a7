package probe

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tierbench/tierbench/tier/profile"
)

// ProfileOf turns a probe of a real device into a profile: QD1 latencies
// of reads, writes and fsync (p50, p99), QD32 IOPS and sequential
// bandwidth, and durability as the probe found it (synced on durable
// storage, none on RAM). Its source says where, when and how it was
// measured.
func ProfileOf(t Tier, host string, at time.Time) profile.Profile {
	f := t.Fio
	p := profile.Profile{
		Name:   "measured-" + strings.Trim(strings.NewReplacer("/", "-", " ", "-").Replace(filepath.Clean(t.Path)), "-"),
		Device: fmt.Sprintf("%s (%s on %s) as measured", t.Path, t.FSType, t.Device),
	}
	if p.Name == "measured-" {
		p.Name = "measured-root"
	}
	ns := func(us float64) profile.Duration { return profile.Duration(time.Duration(us * 1e3)) }
	op := func(l Latency) profile.Op { return profile.Op{P50: ns(l.P50), P99: ns(max(l.P99, l.P50))} }
	p.Latency.Read, p.Latency.Write, p.Latency.Fsync = op(f.RandReadQD1.Lat), op(f.RandWriteQD1.Lat), op(f.FsyncLat)
	for _, a := range f.FsyncAtOnce {
		if a.Lat.P50 > 0 {
			p.FsyncAtOnce = append(p.FsyncAtOnce, profile.AtOnce{Syncs: a.Syncs, Op: op(a.Lat)})
		}
	}
	p.IOPS = profile.Rates{Read: round(f.RandReadQD32.IOPS), Write: round(f.RandWriteQD32.IOPS)}
	const mib = 1 << 20
	p.Bandwidth = profile.Rates{Read: round(f.SeqReadMBps * 1e6 / mib), Write: round(f.SeqWriteMBps * 1e6 / mib)}
	p.Durability = profile.Synced
	if !t.Durable {
		p.Durability = profile.None
	}
	p.Source = fmt.Sprintf("measured on %s %s by tierbench probe (fio %s: 4 KiB random reads and writes at queue depth 1 and 32, 1 MiB sequential, write + fdatasync%s)",
		host, at.UTC().Format("2006-01-02"), f.FioVersion, atOnceSource(f.FsyncAtOnce))
	if f.Note != "" {
		p.Assumed = "nothing assumed; the probe noted: " + f.Note
	}
	return p
}

// atOnceSource says how fsync_at_once was measured, for the source.
func atOnceSource(points []SyncsAtOnce) string {
	if len(points) == 0 {
		return ""
	}
	n := make([]string, len(points))
	for i, a := range points {
		n[i] = strconv.Itoa(a.Syncs)
	}
	return " by 1 and by " + strings.Join(n, ", ") + " writers at once, each on a file of its own"
}

func round(v float64) float64 { return float64(int64(v + 0.5)) }
