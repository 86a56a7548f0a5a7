package postgres

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/tierbench/tierbench/engine"
)

var _ engine.RecoveryReporter = (*DB)(nil)

// The startup process's lines about a crash recovery (PostgreSQL 15):
// "redo starts at 0/1500790" and "redo done at 0/2154890 system usage:
// ... elapsed: 0.15 s".
var (
	redoStarts = regexp.MustCompile(`redo starts at ([0-9A-F]+/[0-9A-F]+)`)
	redoDone   = regexp.MustCompile(`redo done at ([0-9A-F]+/[0-9A-F]+).*elapsed: ([0-9.]+) s`)
)

// Recovery says what the server's last start replayed
// (engine.RecoveryReporter), from its log: the WAL between the two LSNs
// its startup process names, and how long the replay took. "" when the
// log says nothing about a replay.
func (d *DB) Recovery() string {
	b, err := os.ReadFile(filepath.Join(d.dataDir, logName))
	if err != nil {
		return ""
	}
	return replayed(string(b))
}

// replayed reads the last replay a server log tells of.
func replayed(log string) string {
	i := strings.LastIndex(log, "redo starts at ")
	if i < 0 {
		if strings.Contains(log, "automatic recovery in progress") {
			return "recovery found no WAL to replay"
		}
		return ""
	}
	log = log[i:]
	start := redoStarts.FindStringSubmatch(log)
	done := redoDone.FindStringSubmatch(log)
	if start == nil {
		return ""
	}
	if done == nil {
		return "WAL replay started at " + start[1] + "; its end is not in the log"
	}
	from, err1 := lsn(start[1])
	to, err2 := lsn(done[1])
	if err1 != nil || err2 != nil || to < from {
		return fmt.Sprintf("replayed WAL from %s to %s in %s s", start[1], done[1], done[2])
	}
	return fmt.Sprintf("replayed %s of WAL (%s to %s) in %s s", humanize.IBytes(to-from), start[1], done[1], done[2])
}

// lsn parses a WAL position "hi/lo" (hex).
func lsn(s string) (uint64, error) {
	hi, lo, ok := strings.Cut(s, "/")
	if !ok {
		return 0, fmt.Errorf("LSN %q has no /", s)
	}
	h, err := strconv.ParseUint(hi, 16, 32)
	if err != nil {
		return 0, err
	}
	l, err := strconv.ParseUint(lo, 16, 32)
	if err != nil {
		return 0, err
	}
	return h<<32 | l, nil
}
