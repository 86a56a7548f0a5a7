package sqlrecords_test

import (
	"context"
	"errors"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tierbench/tierbench/driver/lane"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/enginetest"
	"github.com/tierbench/tierbench/engine/sqlrecords"
)

func TestMain(m *testing.M) { enginetest.Main(m, "sqlrecords") }

// TestRecordsOnLane runs every records operation of a session on a lane
// (the connection taken from its driver, driver/lane) on every SQL server
// and checks what reached the table; a failed statement (a duplicate key)
// returns the server's error and leaves the connection usable.
func TestRecordsOnLane(t *testing.T) {
	enginetest.ForEachSQL(t, testRecordsOnLane)
}

func testRecordsOnLane(t *testing.T, name string, db engine.DB) {
	ctx := context.Background()
	s, err := db.NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec := s.(*sqlrecords.Session)
	if err := rec.SetupRecords(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := rec.Insert(ctx, []byte("user1"), [][]byte{[]byte("a"), []byte("b")}); err != nil {
		t.Fatal(err)
	}
	if !rec.OnLane() {
		t.Fatalf("a %s session says it cannot run on a lane", name)
	}
	err = lane.Do(ctx, func(ctx context.Context) error {
		if err := rec.Insert(ctx, []byte("user2"), [][]byte{[]byte("c"), []byte("d")}); err != nil {
			return err
		}
		for key, want := range map[string]bool{"user1": true, "user2": true, "user9": false} {
			if found, err := rec.Read(ctx, []byte(key)); err != nil || found != want {
				t.Errorf("read %s: found %v, %v; want %v", key, found, err, want)
			}
		}
		if err := rec.Update(ctx, []byte("user1"), []engine.Field{{Index: 1, Value: []byte("B")}}); err != nil {
			return err
		}
		if err := rec.Update(ctx, []byte("user2"), []engine.Field{{Index: 0, Value: []byte("C")}, {Index: 1, Value: []byte("D")}}); err != nil {
			return err
		}
		if n, err := rec.Scan(ctx, []byte("user"), 10); err != nil || n != 2 {
			t.Errorf("scan: %d records, %v; want 2", n, err)
		}
		dup := rec.Insert(ctx, []byte("user1"), [][]byte{[]byte("x"), []byte("y")})
		var pe *pgconn.PgError
		var me *mysql.MySQLError
		if !(errors.As(dup, &pe) && pe.Code == "23505") && !(errors.As(dup, &me) && me.Number == 1062) {
			t.Errorf("duplicate insert: %v; want the server's unique violation", dup)
		}
		_, err := rec.Read(ctx, []byte("user1")) // still usable
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]int64{
		"SELECT COUNT(*) FROM usertable": 2,
		"SELECT COUNT(*) FROM usertable WHERE ycsb_key = 'user1' AND field0 = 'a' AND field1 = 'B'": 1,
		"SELECT COUNT(*) FROM usertable WHERE ycsb_key = 'user2' AND field0 = 'C' AND field1 = 'D'": 1,
	} {
		if got := enginetest.QueryInt(t, db, q); got != want {
			t.Errorf("%s = %d, want %d", q, got, want)
		}
	}
}
