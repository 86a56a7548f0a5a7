package postgres

import (
	"bufio"
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/tierbench/tierbench/engine"
)

var _ engine.Eventer = (*DB)(nil)

// logTimeLayout is %m of log_line_prefix in log_timezone UTC (params):
// "2026-11-28 15:17:01.123 UTC".
const logTimeLayout = "2006-01-02 15:04:05.000 MST"

// Events are the server's checkpoints between from and to
// (engine.Eventer), from its log (log_checkpoints is on): each one from
// "checkpoint starting: REASON" to its "checkpoint complete: wrote N
// buffers ...", with what it wrote and how long its write and sync
// took. A target server's log is not tierbench's to read: none.
func (d *DB) Events(_ context.Context, from, to time.Time) []engine.Event {
	if d.target != nil {
		return nil
	}
	return engine.LogEvents(filepath.Join(d.dataDir, logName), checkpoints, from, to)
}

// checkpoints reads the checkpoints a server log tells of. The
// checkpointer runs one at a time, so a "complete" line ends the last
// "starting" one; one still running when the log ends is left open.
func checkpoints(sc *bufio.Scanner) []engine.Event {
	var out []engine.Event
	open := -1 // index in out of the checkpoint started and not complete
	for sc.Scan() {
		at, msg, ok := logLine(sc.Text())
		if !ok {
			continue
		}
		if reason, ok := strings.CutPrefix(msg, "checkpoint starting: "); ok {
			out = append(out, engine.Event{At: at, Kind: engine.EventCheckpoint,
				Detail: strings.TrimSpace(reason) + " (not complete when the log was read)"})
			open = len(out) - 1
			continue
		}
		if done, ok := strings.CutPrefix(msg, "checkpoint complete: "); ok && open >= 0 {
			e := &out[open]
			reason, _, _ := strings.Cut(e.Detail, " (not complete")
			e.Duration, e.Detail = at.Sub(e.At), reason+": "+checkpointFigures(done)
			open = -1
		}
	}
	return out
}

// logLine splits a log line with log_line_prefix '%m [%p] ' into its time
// and its message after "LOG:  "; ok is false for any other line.
func logLine(line string) (at time.Time, msg string, ok bool) {
	if len(line) < len(logTimeLayout) {
		return time.Time{}, "", false
	}
	at, err := time.Parse(logTimeLayout, line[:len(logTimeLayout)])
	if err != nil {
		return time.Time{}, "", false
	}
	_, msg, ok = strings.Cut(line[len(logTimeLayout):], " LOG:  ")
	return at, msg, ok
}

// checkpointFigures keeps what a reader of a timeline wants of a
// "checkpoint complete" message: the buffers written, the write, sync
// and total times, and the WAL distance; the file counts are left out.
func checkpointFigures(done string) string {
	var keep []string
	for _, part := range strings.Split(done, ";") {
		part = strings.TrimSpace(part)
		if strings.HasPrefix(part, "wrote ") || strings.HasPrefix(part, "write=") || strings.HasPrefix(part, "distance=") {
			keep = append(keep, part)
		}
	}
	if len(keep) == 0 {
		return done
	}
	return strings.Join(keep, "; ")
}
