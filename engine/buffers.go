package engine

import (
	"context"
	"database/sql"
	"fmt"
)

// BufferCounts are an engine's cumulative counts of page requests served
// from its own buffer cache (Hits) and of pages it had to read from
// below (Reads: the OS page cache or the device). Their change over a
// measured window proves what state the cache was in: a cold run starts
// with reads, a warm one with hits.
type BufferCounts struct {
	Hits, Reads int64
}

// SQLBufferCounts reads a SQL engine's buffer counters on a session of
// db: PostgreSQL's pg_stat_database blks_hit and blks_read (each backend
// publishes its counts at most once a second, so a window's figures lag
// by up to that), InnoDB's buffer pool read requests less the reads it
// had to make, and those reads.
func SQLBufferCounts(ctx context.Context, db DB) (BufferCounts, error) {
	var c BufferCounts
	err := WithSQL(ctx, db, func(conn *sql.Conn, d Dialect) error {
		switch d {
		case Postgres:
			return conn.QueryRowContext(ctx,
				`SELECT coalesce(sum(blks_hit), 0)::bigint, coalesce(sum(blks_read), 0)::bigint FROM pg_stat_database`).Scan(&c.Hits, &c.Reads)
		case MySQL:
			var requests int64
			rows, err := conn.QueryContext(ctx, `SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_buffer_pool_read_requests', 'Innodb_buffer_pool_reads')`)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var name string
				var v int64
				if err := rows.Scan(&name, &v); err != nil {
					return err
				}
				if name == "Innodb_buffer_pool_reads" {
					c.Reads = v
				} else {
					requests = v
				}
			}
			c.Hits = max(requests-c.Reads, 0)
			return rows.Err()
		}
		return fmt.Errorf("no buffer counters for SQL dialect %s", d)
	})
	if err != nil {
		return BufferCounts{}, fmt.Errorf("read buffer counters: %w", err)
	}
	return c, nil
}
