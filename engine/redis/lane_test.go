package redis

import (
	"context"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/driver/lane"
	"github.com/tierbench/tierbench/engine"
)

// TestOnLane runs the records operations on a lane (RESP on a socket of
// the session's own, authenticated with the run's password) and checks
// each against what the go-redis path answers for the same data.
func TestOnLane(t *testing.T) {
	db := openTest(t, engine.NoWAL, nil)
	ctx := context.Background()
	plain := session(t, db)
	load(t, plain, 0, 50)
	if err := db.client.Set(ctx, "plain", "string", 0).Err(); err != nil {
		t.Fatal(err)
	}
	onLane := session(t, db)
	if !onLane.(*Session).OnLane() {
		t.Fatal("a session on a plain TCP server says it cannot run on a lane")
	}
	type answer struct {
		n   int
		err string
	}
	ops := []struct {
		name string
		do   func(ctx context.Context, r engine.Records) (int, error)
	}{
		{"read found", func(ctx context.Context, r engine.Records) (int, error) { return boolN(r.Read(ctx, key(7))) }},
		{"read missing", func(ctx context.Context, r engine.Records) (int, error) { return boolN(r.Read(ctx, key(999))) }},
		{"read of a string", func(ctx context.Context, r engine.Records) (int, error) { return boolN(r.Read(ctx, []byte("plain"))) }},
		{"scan", func(ctx context.Context, r engine.Records) (int, error) { return r.Scan(ctx, key(3), 10) }},
		{"scan past the end", func(ctx context.Context, r engine.Records) (int, error) { return r.Scan(ctx, []byte("~~~~"), 10) }},
		{"update", func(ctx context.Context, r engine.Records) (int, error) {
			return 0, r.Update(ctx, key(8), []engine.Field{{Index: 2, Value: []byte("new")}})
		}},
		{"update of a string", func(ctx context.Context, r engine.Records) (int, error) {
			return 0, r.Update(ctx, []byte("plain"), []engine.Field{{Index: 0, Value: []byte("x")}})
		}},
		{"insert", func(ctx context.Context, r engine.Records) (int, error) { return 0, r.Insert(ctx, key(60), record(60)) }},
		{"read inserted", func(ctx context.Context, r engine.Records) (int, error) { return boolN(r.Read(ctx, key(60))) }},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			var got, want answer
			n, err := op.do(ctx, plain)
			want = answer{n, errText(err)}
			if lerr := lane.Do(ctx, func(ctx context.Context) error {
				n, err := op.do(ctx, onLane)
				got = answer{n, errText(err)}
				return nil
			}); lerr != nil {
				t.Fatal(lerr)
			}
			if got != want {
				t.Errorf("on a lane: %+v; go-redis: %+v", got, want)
			}
		})
	}
	if onLane.(*Session).wire == nil {
		t.Error("the operations did not go through the session's lane connection")
	}
	if v, err := db.client.HGet(ctx, string(key(8)), "field2").Result(); err != nil || v != "new" {
		t.Errorf("field2 of the updated record = %q, %v", v, err)
	}
}

func boolN(found bool, err error) (int, error) {
	if found {
		return 1, err
	}
	return 0, err
}

// errText is an error's server reply ("WRONGTYPE ..."), so the two paths'
// wordings of one reply compare equal.
func errText(err error) string {
	if err == nil {
		return ""
	}
	s := err.Error()
	if i := strings.Index(s, "WRONGTYPE"); i >= 0 {
		return s[i:]
	}
	return s
}
