package mariadb

import (
	"context"
	"fmt"
	"strings"

	"github.com/tierbench/tierbench/engine"
)

var _ engine.CorruptionChecker = (*DB)(nil)

// CheckCorruption runs MariaDB's own check of the restarted server
// (engine.CorruptionChecker): CHECK TABLE over every InnoDB table, which
// reads each page of the table and its indexes (InnoDB verifies each
// page's checksum as it reads it) and checks the indexes against each
// other. A page recovery found corrupt already stopped the server's start,
// which the runner counts as corrupt. Any row of the check that is an
// error, or a status other than OK, is damage.
func (d *DB) CheckCorruption(ctx context.Context) (string, error) {
	rows, err := d.db.QueryContext(ctx, "SELECT CONCAT('`', table_schema, '`.`', table_name, '`') FROM information_schema.tables WHERE engine = 'InnoDB'")
	if err != nil {
		return "", fmt.Errorf("list the InnoDB tables: %w", err)
	}
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return "", err
		}
		tables = append(tables, t)
	}
	if err := rows.Close(); err != nil {
		return "", err
	}
	var damage []string
	for _, t := range tables {
		found, err := d.checkTable(ctx, t)
		if err != nil {
			// A table InnoDB refuses to open is corrupt, in its words.
			found = []string{fmt.Sprintf("%s: %v", t, err)}
		}
		damage = append(damage, found...)
	}
	if len(damage) == 0 {
		return "", nil
	}
	return "CHECK TABLE: " + strings.Join(damage, "; "), nil
}

// checkTable runs CHECK TABLE on t and returns what it says is wrong.
func (d *DB) checkTable(ctx context.Context, t string) ([]string, error) {
	rows, err := d.db.QueryContext(ctx, "CHECK TABLE "+t)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var bad []string
	for rows.Next() {
		var table, op, kind, text string
		if err := rows.Scan(&table, &op, &kind, &text); err != nil {
			return nil, err
		}
		if strings.EqualFold(kind, "error") || (strings.EqualFold(kind, "status") && !strings.EqualFold(text, "OK")) {
			bad = append(bad, fmt.Sprintf("%s: %s %s", table, kind, text))
		}
	}
	return bad, rows.Err()
}
