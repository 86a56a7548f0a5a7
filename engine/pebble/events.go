package pebble

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/dustin/go-humanize"

	"github.com/tierbench/tierbench/engine"
)

// Pebble's flushes and compactions reach the run's timeline through its
// event listener, which only hears them in the process that runs Pebble:
// an in-process DB is an engine.Eventer, the child of a crash run
// (child.go) is not, so crash runs on Pebble show their crash and
// recovery but none of Pebble's own events.

var _ engine.Eventer = (*DB)(nil)

// Events are the flushes and compactions Pebble finished between from and
// to (engine.Eventer).
func (d *DB) Events(_ context.Context, from, to time.Time) []engine.Event {
	return d.events.Between(from, to)
}

// listener records each finished flush and compaction in log.
func listener(log *engine.EventLog) *pebble.EventListener {
	return &pebble.EventListener{
		FlushEnd:      func(i pebble.FlushInfo) { log.Add(flushEvent(i, time.Now())) },
		CompactionEnd: func(i pebble.CompactionInfo) { log.Add(compactionEvent(i, time.Now())) },
	}
}

// flushEvent is a flush that ended at end: what it took in memory and
// wrote to tables.
func flushEvent(i pebble.FlushInfo, end time.Time) engine.Event {
	e := engine.Event{At: end.Add(-i.TotalDuration), Duration: i.TotalDuration, Kind: engine.EventFlush}
	switch {
	case i.Err != nil:
		e.Detail = fmt.Sprintf("failed: %v", i.Err)
	case i.Ingest:
		e.Detail = fmt.Sprintf("ingested %d table(s) of %s", len(i.Output), humanize.IBytes(tablesSize(i.Output)))
	default:
		e.Detail = fmt.Sprintf("%d memtable(s) of %s to %d table(s) of %s", i.Input, humanize.IBytes(i.InputBytes),
			len(i.Output), humanize.IBytes(tablesSize(i.Output)))
	}
	if i.Reason != "" {
		e.Detail += " (" + i.Reason + ")"
	}
	return e
}

// compactionEvent is a compaction that ended at end: its levels, and the
// tables and bytes it read and wrote.
func compactionEvent(i pebble.CompactionInfo, end time.Time) engine.Event {
	e := engine.Event{At: end.Add(-i.TotalDuration), Duration: i.TotalDuration, Kind: engine.EventCompaction}
	var levels []string
	var inTables int
	var inBytes uint64
	for _, l := range i.Input {
		if len(l.Tables) == 0 {
			continue // a level the compaction found empty
		}
		levels = append(levels, fmt.Sprintf("L%d", l.Level))
		inTables += len(l.Tables)
		inBytes += tablesSize(l.Tables)
	}
	e.Detail = fmt.Sprintf("%s -> L%d: %d table(s) of %s in, %d of %s out", strings.Join(levels, "+"), i.Output.Level,
		inTables, humanize.IBytes(inBytes), len(i.Output.Tables), humanize.IBytes(tablesSize(i.Output.Tables)))
	if i.Err != nil {
		e.Detail = fmt.Sprintf("%s -> L%d failed: %v", strings.Join(levels, "+"), i.Output.Level, i.Err)
	}
	if i.Reason != "" {
		e.Detail += " (" + i.Reason + ")"
	}
	return e
}

func tablesSize(tables []pebble.TableInfo) uint64 {
	var n uint64
	for _, t := range tables {
		n += t.Size
	}
	return n
}
