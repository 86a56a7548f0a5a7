package sqlrecords

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/tierbench/tierbench/engine"
)

// Session is one client's connection to a SQL server engine (postgres,
// mariadb): it serves the records data model on the connection and exposes
// the connection and its dialect to SQL workloads (engine.SQL). Both server
// engines hand these out from NewSession; they differ only in the dialect
// and in how a failed close is labelled. Not safe for concurrent use.
type Session struct {
	*Records
	closeLabel string
}

var (
	_ engine.Session      = (*Session)(nil)
	_ engine.Records      = (*Session)(nil)
	_ engine.RecordsSetup = (*Session)(nil)
	_ engine.SQL          = (*Session)(nil)
	_ engine.Explainer    = (*Session)(nil)
)

// NewSession returns a session on conn, a connection the caller took from
// its pool. A failed close is reported as "closeLabel: error". explain, if
// not nil, is the engine's explanation of errors on the connection
// (engine.Explainer): the session applies it to its records operations and
// offers it to SQL workloads.
func NewSession(conn *sql.Conn, d engine.Dialect, closeLabel string, explain func(error) error) *Session {
	r := New(conn, d)
	r.SetExplain(explain)
	return &Session{Records: r, closeLabel: closeLabel}
}

// Close releases the prepared statements and returns the connection to the
// pool. A connection the pool already took back (sql.ErrConnDone) is not an
// error.
func (s *Session) Close() error {
	s.Records.Close()
	if err := s.Conn().Close(); err != nil && !errors.Is(err, sql.ErrConnDone) {
		return fmt.Errorf("%s: %w", s.closeLabel, err)
	}
	return nil
}
