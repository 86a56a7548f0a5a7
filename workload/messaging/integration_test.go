package messaging

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/enginetest"
	"github.com/tierbench/tierbench/engine/mariadb"
)

// commitCounter returns a reader of the server's own count of committed
// write transactions and how much each reading adds to it. PostgreSQL:
// txid_current(), which gives every writing transaction the next id (and
// takes one itself). MariaDB: InnoDB's trx_rw_commits counter, enabled
// and read as root over the socket in the datadir (the client account may
// do neither).
func commitCounter(t *testing.T, name string, db engine.DB, dirs map[string]string) (read func() int64, perRead int64) {
	t.Helper()
	if name == "postgres" {
		return func() int64 { return enginetest.QueryInt(t, db, "SELECT txid_current()") }, 1
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "unix", filepath.Join(dirs[mariadb.Data], "mariadbd.sock")
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	root := sql.OpenDB(conn)
	t.Cleanup(func() { root.Close() })
	if _, err := root.Exec("SET GLOBAL innodb_monitor_enable = 'trx_rw_commits'"); err != nil {
		t.Fatalf("enable trx_rw_commits as root on %s: %v", cfg.Addr, err)
	}
	return func() int64 {
		var n int64
		if err := root.QueryRow("SELECT `COUNT` FROM information_schema.INNODB_METRICS WHERE NAME = 'trx_rw_commits'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}, 0
}

// queryText runs a one-value query whose value is text.
func queryText(t *testing.T, db engine.DB, q string) string {
	t.Helper()
	var s string
	ctx := context.Background()
	err := engine.WithSQL(ctx, db, func(conn *sql.Conn, _ engine.Dialect) error {
		return conn.QueryRowContext(ctx, q).Scan(&s)
	})
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return s
}

// wantCounts checks SELECT COUNT(*) of each query.
func wantCounts(t *testing.T, db engine.DB, want map[string]int64) {
	t.Helper()
	for what, n := range want {
		if got := enginetest.QueryInt(t, db, "SELECT COUNT(*) FROM "+what); got != n {
			t.Errorf("SELECT COUNT(*) FROM %s = %d, want %d", what, got, n)
		}
	}
}

// TestOneMessage carries one message through its steps on one client:
// the ops of its Do calls, the commits the server counts (as documented:
// 10), the 5 message objects; then a message left half-routed, which
// Verify refuses until Close finishes it.
func TestOneMessage(t *testing.T) {
	for _, e := range enginetest.SQLEngines(t) {
		t.Run(e.Name, func(t *testing.T) { oneMessage(t, e) })
	}
}

func oneMessage(t *testing.T, e enginetest.SQLEngine) {
	dirs := enginetest.Folders(t, e, "")
	db, err := enginetest.OpenConfig(t, e, engine.Config{Dirs: dirs, Durability: engine.Sync, Options: e.Engine.Spec().MustResolveOptions(nil)})
	if err != nil {
		t.Fatalf("open %s: %v", e.Name, err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("close %s: %v", e.Name, err)
		}
	})
	name := e.Name
	{
		ctx := context.Background()
		w := newTest(t, map[string]string{pServices: "2", pSeed: "5"})
		if _, err := w.Load(ctx, db, 1); err != nil {
			t.Fatal(err)
		}
		s, err := db.NewSession(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := w.NewClient(2, s); err == nil || !strings.Contains(err.Error(), "more clients than services (2)") {
			t.Errorf("a third client on 2 services: %v", err)
		}
		wc, err := w.NewClient(0, s)
		if err != nil {
			t.Fatal(err)
		}
		c := wc.(*Client)
		defer c.Close()
		if err := c.prepare(ctx); err != nil {
			t.Fatal(err)
		}
		if name == "mariadb" { // no background commit of the tables' statistics while counting
			enginetest.Exec(t, db, "ALTER TABLE "+InboundTable+" STATS_AUTO_RECALC = 0", "ALTER TABLE "+OutboundTable+" STATS_AUTO_RECALC = 0")
		}
		commits, perRead := commitCounter(t, name, db, dirs)
		before := commits()
		var ops []int
		for range 9 {
			op, err := c.Do(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ops = append(ops, op)
		}
		if got := commits() - before - perRead; got != int64(w.CommitsPerMessage()) || got != 10 {
			t.Errorf("%s counted %d commits of one message, want %d", name, got, w.CommitsPerMessage())
		}
		if want := []int{0, 1, 1, 1, 1, 2, 2, 2, 2}; !slices.Equal(ops, want) {
			t.Errorf("ops of one message: %v, want %v", ops, want)
		}
		wantCounts(t, db, map[string]int64{
			InboundTable: 1, InboundTable + " WHERE status = 'done' AND done_at >= received_at": 1,
			OutboundTable + " WHERE status = 'sent' AND sent_at >= queued_at": 4, "(SELECT DISTINCT body FROM " + OutboundTable + ") b": 4,
		})
		body := queryText(t, db, "SELECT body FROM "+InboundTable)
		if want := newGenerator().message(nil, 5, 0, 1, 2048); body != string(want) {
			t.Errorf("stored inbound differs from the generator's message 1 of service 0:\n%q\n%q", body, want)
		}
		if got := queryText(t, db, "SELECT body FROM "+OutboundTable+" WHERE route = 3"); got != string(transform(nil, []byte(body), 3)) {
			t.Errorf("route 3 stored %q", got)
		}
		checked, err := w.Verify(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %s", name, checked)
		if !strings.Contains(checked, "1 inbound done, 5 message objects and 10 commits each, 0 half-routed, 0 outbound without inbound") {
			t.Errorf("Verify says %q", checked)
		}

		// The next message stops after its second route is queued.
		for range 3 {
			if _, err := c.Do(ctx); err != nil {
				t.Fatal(err)
			}
		}
		wantCounts(t, db, map[string]int64{InboundTable + " WHERE status = 'received' AND service = 1": 1, OutboundTable + " WHERE status = 'queued'": 2})
		if _, err := w.Verify(ctx, db); err == nil || !strings.Contains(err.Error(), "1 messages half-routed after the run") {
			t.Errorf("Verify of a half-routed message: %v", err)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		wantCounts(t, db, map[string]int64{InboundTable + " WHERE status = 'done'": 2, OutboundTable + " WHERE status = 'sent'": 8})
		if checked, err = w.Verify(ctx, db); err != nil || !strings.Contains(checked, "2 inbound done") ||
			!strings.Contains(checked, "1 messages in flight at the end finished after the window") {
			t.Errorf("Verify after Close finished the message: %q, %v", checked, err)
		}
	}
}

// TestCleanStop runs 4 clients through the driver for a second, stops
// them as the runner does (the run's context ends mid-step, then the
// clients are closed) and checks that every inbound stored was counted
// by the driver, that no message is left half-routed and that every one
// has its 5 message objects; then breaks the tables by hand for Verify
// to catch.
func TestCleanStop(t *testing.T) {
	enginetest.ForEachSQL(t, func(t *testing.T, name string, db engine.DB) {
		ctx := context.Background()
		w := newTest(t, map[string]string{pServices: "6", pBytes: "1024", pSeed: "3"})
		if _, err := w.Load(ctx, db, 1); err != nil {
			t.Fatal(err)
		}
		var clients []driver.Client
		for i := range 4 {
			s, err := db.NewSession(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			c, err := w.NewClient(i, s)
			if err != nil {
				t.Fatal(err)
			}
			clients = append(clients, c)
		}
		res, err := driver.Run(ctx, driver.Config{Ops: w.Ops(), Duration: time.Second}, clients)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range clients {
			if err := c.(*Client).Close(); err != nil {
				t.Errorf("close: %v", err)
			}
		}
		m := res.Measured
		if m.Errors != 0 {
			t.Errorf("%d errors; first: %v", m.Errors, res.FirstError)
		}
		inbound := m.ByOp[opInbound].Ops
		t.Logf("%s: %d inbound, %d transform, %d outbound ops in %v", name, inbound, m.ByOp[opTransform].Ops, m.ByOp[opOutbound].Ops, m.Length)
		if inbound == 0 {
			t.Fatal("no message in a second")
		}
		wantCounts(t, db, map[string]int64{
			InboundTable: inbound, InboundTable + " WHERE status <> 'done'": 0,
			OutboundTable: 4 * inbound, OutboundTable + " WHERE status <> 'sent'": 0,
		})
		checked, err := w.Verify(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %s", name, checked)
		if !strings.Contains(checked, "5 message objects and 10 commits each, 0 half-routed, 0 outbound without inbound; end-to-end latency mean ") {
			t.Errorf("Verify says %q", checked)
		}

		// A queued message lost, and one queued for no inbound.
		enginetest.Exec(t, db, "DELETE FROM "+OutboundTable+" WHERE service = 0 AND seq = 1 AND route = 2",
			"INSERT INTO "+OutboundTable+" (service, seq, route, status, queued_at, body) VALUES (99, 1, 1, 'sent', 0, 'x')")
		_, err = w.Verify(ctx, db)
		if err == nil {
			t.Fatal("Verify passed on broken tables")
		}
		t.Logf("%s: %v", name, err)
		for _, want := range []string{"done messages without exactly 4 outbound rows all sent: 1 with 3 outbound, 3 sent",
			"1 outbound rows without their inbound", "queued outbound messages in the tables but clients saw"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("Verify's error lacks %q", want)
			}
		}
	})
}
