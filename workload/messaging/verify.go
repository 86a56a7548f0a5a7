package messaging

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/tierbench/tierbench/engine"
)

// Queries of Verify: the inbound messages grouped by status and by how
// many outbound rows they have and how many of those are sent; the
// outbound rows without their inbound; the end-to-end latency of the done
// ones, in microseconds.
const (
	qStates = "SELECT i.status, COALESCE(o.n, 0), COALESCE(o.sent, 0), COUNT(*) FROM " + InboundTable + " i LEFT JOIN " +
		"(SELECT service, seq, COUNT(*) AS n, SUM(CASE WHEN status = 'sent' THEN 1 ELSE 0 END) AS sent FROM " + OutboundTable +
		" GROUP BY service, seq) o ON o.service = i.service AND o.seq = i.seq GROUP BY i.status, COALESCE(o.n, 0), COALESCE(o.sent, 0)"
	qOrphans = "SELECT COUNT(*) FROM " + OutboundTable + " o WHERE NOT EXISTS (SELECT 1 FROM " + InboundTable +
		" i WHERE i.service = o.service AND i.seq = o.seq)"
	qLatency = "SELECT COALESCE(SUM(done_at - received_at), 0), COALESCE(MAX(done_at - received_at), 0) FROM " +
		InboundTable + " WHERE status = 'done'"
)

// tally is what the tables hold after a run.
type tally struct {
	inbound, done, halfRouted int64 // inbound rows, done, not done
	outbound, sent            int64
	misrouted                 []string // done messages not fully routed, in words
	orphans                   int64
	latencySum, latencyMax    int64 // microseconds, over the done
}

// Verify checks, after the run, that every inbound marked done has
// exactly `routes` outbound rows, all sent (1 + routes message objects);
// that no outbound row lacks its inbound; that no message is left half
// routed (Close finishes the one each client had in flight when the run
// ended, and counts those it could not); and that no step a client saw
// commit was lost. It reports the counts and the mean end-to-end latency
// of the done messages (received to done, including the time a message
// waited for its client between steps).
func (w *Workload) Verify(ctx context.Context, db engine.DB) (string, error) {
	var t tally
	err := engine.WithSQL(ctx, db, func(conn *sql.Conn, _ engine.Dialect) error {
		return w.count(ctx, conn, &t)
	})
	if err != nil {
		return "", fmt.Errorf("messaging verify: %w", err)
	}
	s := &w.stats
	var broken []string
	if len(t.misrouted) > 0 {
		broken = append(broken, fmt.Sprintf("done messages without exactly %d outbound rows all sent: %s", w.routes, strings.Join(t.misrouted, ", ")))
	}
	if t.orphans > 0 {
		broken = append(broken, fmt.Sprintf("%d outbound rows without their inbound", t.orphans))
	}
	// After a crash, messages in flight stay half-routed and a mode that
	// loses commits loses steps: the record of acknowledged inbound
	// messages (CheckAcks) counts those; what must still hold is above.
	crashed := w.acks != nil
	if unfinished := s.unfinished.Load(); t.halfRouted > unfinished && !crashed {
		broken = append(broken, fmt.Sprintf("%d messages half-routed after the run, of which clients knew %d unfinished", t.halfRouted, unfinished))
	}
	for _, c := range []struct {
		what        string
		rows, acked int64
	}{{"inbound messages", t.inbound, s.inbound.Load()}, {"queued outbound messages", t.outbound, s.transformed.Load()},
		{"sent outbound messages", t.sent, s.sent.Load()}, {"done inbound messages", t.done, s.done.Load()}} {
		if c.rows < c.acked && !crashed {
			broken = append(broken, fmt.Sprintf("%d %s in the tables but clients saw %d commit: acknowledged steps were lost", c.rows, c.what, c.acked))
		}
	}
	if len(broken) > 0 {
		return "", fmt.Errorf("messaging invariant broken: %s", strings.Join(broken, "; "))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s inbound done, %d message objects and %d commits each, %d half-routed, %d outbound without inbound",
		humanize.Comma(t.done), w.ObjectsPerMessage(), w.CommitsPerMessage(), t.halfRouted, t.orphans)
	if t.done > 0 {
		fmt.Fprintf(&b, "; end-to-end latency mean %s, max %s", time.Duration(t.latencySum/t.done)*time.Microsecond,
			time.Duration(t.latencyMax)*time.Microsecond)
	}
	fmt.Fprintf(&b, "; %d messages in flight at the end finished after the window (unmeasured)", s.finishedLate.Load())
	if u := s.unfinished.Load(); u > 0 {
		fmt.Fprintf(&b, ", %d could not be", u)
	}
	fmt.Fprintf(&b, "; %s", &s.retries)
	return b.String(), nil
}

// count fills t from the tables.
func (w *Workload) count(ctx context.Context, conn *sql.Conn, t *tally) error {
	rows, err := conn.QueryContext(ctx, qStates)
	if err != nil {
		return fmt.Errorf("%s: %w", qStates, err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			status           string
			n, sent, inbound int64
		)
		if err := rows.Scan(&status, &n, &sent, &inbound); err != nil {
			return fmt.Errorf("%s: %w", qStates, err)
		}
		t.inbound += inbound
		t.outbound += n * inbound
		t.sent += sent * inbound
		switch {
		case status != "done":
			t.halfRouted += inbound
		case n != int64(w.routes) || sent != n:
			t.misrouted = append(t.misrouted, fmt.Sprintf("%d with %d outbound, %d sent", inbound, n, sent))
		}
		if status == "done" {
			t.done += inbound
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: %w", qStates, err)
	}
	if err := conn.QueryRowContext(ctx, qOrphans).Scan(&t.orphans); err != nil {
		return fmt.Errorf("%s: %w", qOrphans, err)
	}
	if err := conn.QueryRowContext(ctx, qLatency).Scan(&t.latencySum, &t.latencyMax); err != nil {
		return fmt.Errorf("%s: %w", qLatency, err)
	}
	return nil
}
