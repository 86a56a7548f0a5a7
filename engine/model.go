package engine

import (
	"context"
	"database/sql"
	"errors"
)

// Model names a data model: what a workload's clients ask of an engine.
// An engine declares the models it serves (Spec.Models) and a workload the
// one it needs (workload.Spec.Model), so a study that pairs them wrongly is
// refused before it runs.
type Model string

// The data models.
const (
	ModelRecords Model = "records" // YCSB's records: Records on a session
	ModelSQL     Model = "sql"     // SQL statements: SQL on a session
	ModelCache   Model = "cache"   // a key-value cache driven by the engine's own client: Cache on the DB
)

// Serves reports whether the engine serves model m.
func (s Spec) Serves(m Model) bool {
	for _, x := range s.Models {
		if x == m {
			return true
		}
	}
	return false
}

// ErrNoModel is the failure of a workload on an engine that does not serve
// the data model it needs (a SQL workload on pebble): a choice of engine
// and workload no run can fix. The workload finds the model with NeedSQL,
// NeedRecords or NeedCache, whose errors wrap it and say which model is
// missing; the runner, which knows the engine, names it.
var ErrNoModel = errors.New("the engine does not serve the data model this workload needs")

// noModel is an ErrNoModel in words that name the missing model.
type noModel string

func (e noModel) Error() string      { return string(e) }
func (noModel) Is(target error) bool { return target == ErrNoModel }

// NeedSQL returns s as SQL, or an ErrNoModel.
func NeedSQL(s Session) (SQL, error) {
	q, ok := s.(SQL)
	if !ok {
		return nil, noModel("the engine is not a SQL engine; this workload needs one (postgres, mariadb)")
	}
	return q, nil
}

// NeedRecords returns s as Records, or an ErrNoModel.
func NeedRecords(s Session) (Records, error) {
	r, ok := s.(Records)
	if !ok {
		return nil, noModel("the engine does not serve the records data model")
	}
	return r, nil
}

// NeedCache returns db as Cache, or an ErrNoModel.
func NeedCache(db DB) (Cache, error) {
	c, ok := db.(Cache)
	if !ok {
		return nil, noModel("the engine does not serve the cache data model")
	}
	return c, nil
}

// WithSQL runs f on the connection of a new session of db and closes the
// session. Loads, checks and tests use it for work outside a client: a
// session is what engines hand out, and SQL work needs its connection and
// dialect. f's error goes through the engine's explanation (Explain), so a
// load that fills a tier or loses its server says so.
func WithSQL(ctx context.Context, db DB, f func(*sql.Conn, Dialect) error) error {
	return WithSession(ctx, db, func(s Session) error {
		q, err := NeedSQL(s)
		if err != nil {
			return err
		}
		return Explain(s, f(q.Conn(), q.Dialect()))
	})
}
