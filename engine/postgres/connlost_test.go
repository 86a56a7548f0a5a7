package postgres

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestConnLost covers which client errors make the engine read the
// server's log: a connection that broke, including a statement sent after
// pgx closed it ("conn closed", as a batch's COMMIT after a crash restart
// reads), and a FATAL or PANIC report; not an ordinary ERROR or the end
// of a run.
func TestConnLost(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		lost bool
	}{
		{"unexpected EOF", fmt.Errorf("insert: %w", io.ErrUnexpectedEOF), true},
		{"closed on a lane", fmt.Errorf("read from postgres: postgres closed the connection: %w", io.EOF), true},
		{"conn closed", fmt.Errorf("commit: %w", pgconn.ErrConnClosed), true},
		{"panic", &pgconn.PgError{Severity: "PANIC", Message: "could not write to file"}, true},
		{"error", &pgconn.PgError{Severity: "ERROR", Message: "could not extend file"}, false},
		{"cancelled", fmt.Errorf("query: %w", context.Canceled), false},
	} {
		if got := connLost(tc.err); got != tc.lost {
			t.Errorf("%s: connLost(%v) = %v, want %v", tc.name, tc.err, got, tc.lost)
		}
	}
}
