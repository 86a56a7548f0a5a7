package sqlrecords

import (
	"context"
	"fmt"
	"strconv"

	"github.com/tierbench/tierbench/driver/lane"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/sqlwire"
)

// laneState is a Records' connection on a lane (driver/lane): the
// client's connection taken from its driver (engine/sqlwire) at its first
// operation on a lane, with the same statements prepared under names of
// its own.
type laneState struct {
	eligible     sqlwire.Eligible
	taken        sqlwire.Conn
	insert, read string
	scan, all    string
	update       []string
	args         []sqlwire.Arg // reused
}

// OnLane reports whether the records can run on a lane: on a plain
// connection of a dialect with a lane protocol (engine/sqlwire), whose
// socket the first operation on a lane takes over.
func (r *Records) OnLane() bool { return r.lane.eligible.OnLane(r.conn, r.d) }

// wire returns the taken connection when ctx runs on a lane, taking it at
// the first call (after ensure or prepare set the field count), or nil.
func (r *Records) wire(ctx context.Context) (sqlwire.Conn, error) {
	if lane.From(ctx) == nil || !r.OnLane() {
		return nil, nil
	}
	if r.lane.taken != nil {
		return r.lane.taken, nil
	}
	ls := &r.lane
	prefix := sqlwire.Prefix("ycsb")
	ls.insert, ls.read, ls.scan, ls.all = prefix+"insert", prefix+"read", prefix+"scan", prefix+"all"
	stmts := []sqlwire.Statement{{Name: ls.insert, SQL: r.sql.insert}, {Name: ls.read, SQL: r.sql.read},
		{Name: ls.scan, SQL: r.sql.scan}, {Name: ls.all, SQL: r.sql.all}}
	ls.update = make([]string, r.fields)
	for i, q := range r.sql.update {
		ls.update[i] = prefix + "update" + strconv.Itoa(i)
		stmts = append(stmts, sqlwire.Statement{Name: ls.update[i], SQL: q})
	}
	pw, err := sqlwire.Take(ctx, r.conn, r.d, stmts)
	if err != nil {
		return nil, r.Explain(err)
	}
	ls.taken = pw
	return pw, nil
}

func (l *laneState) close() {
	if l.taken != nil {
		l.taken.Close(context.Background())
		l.taken = nil
	}
}

func (r *Records) laneInsert(ctx context.Context, pw sqlwire.Conn, err error, key []byte, fields [][]byte) error {
	if err != nil {
		return err
	}
	args := append(r.lane.args[:0], sqlwire.Bytes(key))
	for _, f := range fields {
		args = append(args, sqlwire.Bytes(f))
	}
	r.lane.args = args
	_, err = pw.Exec(ctx, sqlwire.Call{Name: r.lane.insert, Args: args})
	return r.Explain(err)
}

func (r *Records) laneRead(ctx context.Context, pw sqlwire.Conn, err error, key []byte) (bool, error) {
	if err != nil {
		return false, err
	}
	r.lane.args = append(r.lane.args[:0], sqlwire.Bytes(key))
	res, err := pw.Exec(ctx, sqlwire.Call{Name: r.lane.read, Args: r.lane.args})
	return res.Row != nil, r.Explain(err)
}

func (r *Records) laneUpdate(ctx context.Context, pw sqlwire.Conn, err error, key []byte, fields []engine.Field) error {
	if err != nil {
		return err
	}
	if len(fields) == r.fields {
		args := r.lane.args[:0]
		for range r.fields {
			args = append(args, sqlwire.Null())
		}
		for _, f := range fields {
			args[f.Index] = sqlwire.Bytes(f.Value)
		}
		r.lane.args = append(args, sqlwire.Bytes(key))
		_, err := pw.Exec(ctx, sqlwire.Call{Name: r.lane.all, Args: r.lane.args})
		return r.Explain(err)
	}
	for _, f := range fields {
		if f.Index < 0 || f.Index >= r.fields {
			return fmt.Errorf("update of field %d: the table has %d fields", f.Index, r.fields)
		}
		r.lane.args = append(r.lane.args[:0], sqlwire.Bytes(f.Value), sqlwire.Bytes(key))
		if _, err := pw.Exec(ctx, sqlwire.Call{Name: r.lane.update[f.Index], Args: r.lane.args}); err != nil {
			return r.Explain(err)
		}
	}
	return nil
}

func (r *Records) laneScan(ctx context.Context, pw sqlwire.Conn, err error, start []byte, count int) (int, error) {
	if err != nil {
		return 0, err
	}
	r.lane.args = append(r.lane.args[:0], sqlwire.Bytes(start), sqlwire.Int(int64(count)))
	res, err := pw.Exec(ctx, sqlwire.Call{Name: r.lane.scan, Args: r.lane.args})
	return int(res.Rows), r.Explain(err)
}
