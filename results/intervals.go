package results

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// intervalSchema holds each run's per-tick latency histograms (all ops,
// one a second by default): the run's latency over time, which `tierbench
// export --hdr` writes as an HdrHistogram interval log. A table of its own,
// made on open like the others, so a store written before it existed
// opens as it did (its runs simply have none) and an older tierbench
// reading a newer store ignores it: no schema version bump is needed.
const intervalSchema = `
CREATE TABLE IF NOT EXISTS interval_histograms (
	run_id    TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	op        TEXT NOT NULL,
	kind      TEXT NOT NULL,
	idx       INTEGER NOT NULL,  -- the tick's index in the run, warmup's first
	phase     TEXT NOT NULL,
	start_ns  INTEGER NOT NULL,  -- the tick's start, Unix nanoseconds
	length_ns INTEGER NOT NULL,
	hdr       BLOB NOT NULL,     -- HdrHistogram V2 compressed encoding, nanoseconds
	PRIMARY KEY (run_id, op, kind, idx)
);
`

// Span is the interval of a run an interval histogram covers.
type Span struct {
	Index  int
	Start  time.Time
	Length time.Duration
}

// putInterval stores one interval histogram of run runID in tx.
func putInterval(ctx context.Context, tx *sql.Tx, runID string, h Histogram) error {
	sp := h.Interval
	if _, err := tx.ExecContext(ctx, `INSERT INTO interval_histograms (run_id, op, kind, idx, phase, start_ns, length_ns, hdr)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, runID, h.Op, h.Kind, sp.Index, h.Phase, sp.Start.UnixNano(), int64(sp.Length), h.Encoded); err != nil {
		return fmt.Errorf("store interval %d histogram of run %s: %w", sp.Index, runID, err)
	}
	return nil
}

// IntervalHistograms returns a run's interval histograms of op and kind,
// in order; none for a run stored before they were kept, or measured by a
// load generator that reports no histograms per interval.
func (s *Store) IntervalHistograms(ctx context.Context, runID, op, kind string) ([]Histogram, error) {
	if s.missing["interval_histograms"] {
		return nil, nil // a store made before they were kept, opened read-only
	}
	rows, err := s.db.QueryContext(ctx, `SELECT idx, phase, start_ns, length_ns, hdr FROM interval_histograms
		WHERE run_id = ? AND op = ? AND kind = ? ORDER BY idx`, runID, op, kind)
	if err != nil {
		return nil, fmt.Errorf("load interval histograms of run %s: %w", runID, err)
	}
	defer rows.Close()
	var out []Histogram
	for rows.Next() {
		h := Histogram{Op: op, Kind: kind, Interval: &Span{}}
		var start, length int64
		if err := rows.Scan(&h.Interval.Index, &h.Phase, &start, &length, &h.Encoded); err != nil {
			return nil, fmt.Errorf("read interval histograms of run %s: %w", runID, err)
		}
		h.Interval.Start, h.Interval.Length = time.Unix(0, start), time.Duration(length)
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read interval histograms of run %s: %w", runID, err)
	}
	return out, nil
}
