package redis

import (
	"bufio"
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/tierbench/tierbench/engine"
)

var _ engine.Eventer = (*DB)(nil)

// logTimeLayout is the time of a Redis log line, "12345:M 28 Nov 2026
// 15:17:01.123 * message", in the server's local time zone, which is
// tierbench's: the server inherits its environment.
const logTimeLayout = "2 Jan 2006 15:04:05.000"

// background are the server's background writes whose start and end it
// logs, by the words that start and end them.
var background = []struct {
	start, detail string
	ends          []string
}{
	{"Background saving started", "RDB snapshot (BGSAVE)",
		[]string{"Background saving terminated", "Background saving error"}},
	{"Background append only file rewriting started", "AOF rewrite",
		[]string{"Background AOF rewrite terminated", "Background AOF rewrite finished", "Background AOF rewrite signal handler"}},
}

// Events are the server's RDB snapshots and AOF rewrites between from and
// to (engine.Eventer), from its log: each from its "started" line to the
// line that ends it, with that line's words. A target server's log is not
// tierbench's to read: none.
func (d *DB) Events(_ context.Context, from, to time.Time) []engine.Event {
	if d.target != nil {
		return nil
	}
	parse := func(sc *bufio.Scanner) []engine.Event { return backgroundWrites(sc, time.Local) }
	return engine.LogEvents(filepath.Join(d.dir, LogName), parse, from, to)
}

// backgroundWrites reads the snapshots and rewrites a server log tells
// of, its times in loc; one still running when the log ends is left open.
func backgroundWrites(sc *bufio.Scanner, loc *time.Location) []engine.Event {
	var out []engine.Event
	open := make([]int, len(background)) // index in out + 1 of each kind's running one
	for sc.Scan() {
		at, msg, ok := logLine(sc.Text(), loc)
		if !ok {
			continue
		}
		for k, bg := range background {
			if strings.HasPrefix(msg, bg.start) {
				out = append(out, engine.Event{At: at, Kind: engine.EventSnapshot, Detail: bg.detail + " (not ended when the log was read)"})
				open[k] = len(out)
				continue
			}
			for _, end := range bg.ends {
				if strings.HasPrefix(msg, end) && open[k] > 0 {
					e := &out[open[k]-1]
					e.Duration, e.Detail = at.Sub(e.At), bg.detail+": "+strings.TrimSpace(msg)
					open[k] = 0
				}
			}
		}
	}
	return out
}

// logLine splits "PID:ROLE DD Mon YYYY HH:MM:SS.mmm L message" into its
// time and message; ok is false for any other line.
func logLine(line string, loc *time.Location) (at time.Time, msg string, ok bool) {
	f := strings.SplitN(line, " ", 7)
	if len(f) < 7 || !strings.Contains(f[0], ":") {
		return time.Time{}, "", false
	}
	at, err := time.ParseInLocation(logTimeLayout, strings.Join(f[1:5], " "), loc)
	if err != nil {
		return time.Time{}, "", false
	}
	return at, f[6], true
}
