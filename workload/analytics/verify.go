package analytics

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/tierbench/tierbench/engine"
)

// Verify checks the data and the answers after a run: each table holds
// the rows the generator wrote, which are the specification's counts at
// this scale (clause 4.2.5; lineitem's, which the generator draws, 1 to 7
// lines per order); every query that ran returned, each time, as many rows
// as DuckDB's answer to the same text on the same data, and the
// specification's count where it does not depend on the scale (Q1 4
// rows, Q4 5, ...). A query that did not run (a short window) is named,
// not failed. It returns what it checked, with the whole sets' elapsed
// times (warmup included).
func (w *Workload) Verify(ctx context.Context, db engine.DB) (string, error) {
	counts := make([]int64, len(tables))
	err := engine.WithSQL(ctx, db, func(conn *sql.Conn, _ engine.Dialect) error {
		for i, t := range tables {
			q := "SELECT COUNT(*) FROM " + t.name
			if err := conn.QueryRowContext(ctx, q).Scan(&counts[i]); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("analytics verify: %w", err)
	}
	data, err := w.prepare(ctx)
	if err != nil {
		return "", fmt.Errorf("analytics verify: %w", err)
	}
	broken := w.checkTables(data, counts)
	ran, notRun, wrong := w.checkAnswers(data)
	broken = append(broken, wrong...)
	if len(broken) > 0 {
		return "", fmt.Errorf("analytics (TPC-H-like) check failed at scale %s: %s", w.scaleText, strings.Join(broken, "; "))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "TPC-H-like, not audited, scale %s (data from %s): the 8 tables hold the generator's rows, the specification's counts (", w.scaleText, data.version)
	for i, t := range tables {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", t.name, counts[i])
	}
	b.WriteString(")")
	if len(ran) > 0 {
		fmt.Fprintf(&b, "; every answer's row count was DuckDB's on the same data (and the specification's where fixed): %s", strings.Join(ran, ", "))
	}
	if len(notRun) > 0 {
		fmt.Fprintf(&b, "; not run: %s", strings.Join(notRun, ", "))
	}
	s := &w.stats.sets
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n > 0 {
		fmt.Fprintf(&b, "; %d whole sets of %d queries, elapsed mean %s, min %s, max %s (warmup included)",
			s.n, len(w.selected), (s.sum / time.Duration(s.n)).Round(time.Millisecond), s.min.Round(time.Millisecond), s.max.Round(time.Millisecond))
	}
	return b.String(), nil
}

// checkTables compares the tables' row counts with the generator's, and
// the generator's with the specification's.
func (w *Workload) checkTables(data *dataSet, counts []int64) []string {
	var broken []string
	for i, t := range tables {
		gen := data.rows[t.name]
		if counts[i] != gen {
			broken = append(broken, fmt.Sprintf("%s holds %d rows, the generator wrote %d", t.name, counts[i], gen))
		}
		if want := t.specRows(w.scale); want >= 0 && gen != want {
			broken = append(broken, fmt.Sprintf("the generator wrote %d %s rows, the specification's count is %d", gen, t.name, want))
		}
	}
	if orders, lines := data.rows["orders"], data.rows["lineitem"]; lines < orders || lines > 7*orders {
		broken = append(broken, fmt.Sprintf("the generator wrote %d lineitem rows for %d orders, not 1 to 7 each", lines, orders))
	}
	return broken
}

// checkAnswers compares the row counts each query returned with DuckDB's
// and the specification's. It returns the queries that ran with their row
// counts and runs ("q1 4 (x3)"), those that did not, and what is wrong.
func (w *Workload) checkAnswers(data *dataSet) (ran, notRun, broken []string) {
	for k, n := range w.selected {
		q, name := &w.stats.queries[k], w.ops[k]
		runs := q.runs.Load()
		if runs == 0 {
			notRun = append(notRun, name)
			continue
		}
		got := q.rows.Load()
		ran = append(ran, fmt.Sprintf("%s %d (x%d)", name, got, runs))
		exp, ok := data.expected[name]
		switch {
		case !ok:
			broken = append(broken, fmt.Sprintf("%s has no expected answer in the cache", name))
		case got != exp.Rows:
			broken = append(broken, fmt.Sprintf("%s returned %d rows, DuckDB's answer on the same data has %d", name, got, exp.Rows))
		}
		if odd := q.odd.Load(); odd > 0 {
			broken = append(broken, fmt.Sprintf("%s returned another row count than its first %d in %d of its %d runs", name, got, odd, runs))
		}
		if want, ok := specRows[n]; ok && w.scale >= specRowsFrom && got != want {
			broken = append(broken, fmt.Sprintf("%s returned %d rows, the specification's answer has %d", name, got, want))
		}
	}
	return ran, notRun, broken
}
