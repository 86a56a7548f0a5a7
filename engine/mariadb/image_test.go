package mariadb

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/tierbench/tierbench/images/imagestest"
)

// TestLabImage runs the image's entrypoint as the engine's pod does:
// uid 999, a fresh datadir, the server's arguments in full, the user's
// password from the environment; checks the readiness probe, that the
// user logs in over TCP with the password only, and that root does not
// over TCP; then starts it again on the same data.
func TestLabImage(t *testing.T) {
	r, err := Engine{}.LabImage()
	if err != nil {
		t.Fatal(err)
	}
	root := imagestest.UnpackRoot(t, imagestest.Build(t, r))
	imagestest.Volume(t, root, "/var/lib/mysql-data")
	port := imagestest.FreePort(t)
	password := imagestest.Secret()
	env := imagestest.Env(r,
		"MARIADB_DATABASE=bench",
		"MARIADB_USER=bench",
		"MARIADB_PASSWORD="+password,
		"MARIADB_ROOT_HOST=localhost",
		"MARIADB_ALLOW_EMPTY_ROOT_PASSWORD=1",
	)
	args := append(r.Config.Entrypoint, "mariadbd",
		"--datadir=/var/lib/mysql-data",
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--port=%d", port),
		"--innodb-buffer-pool-size=64M",
		"--innodb-log-file-size=32M",
		"--innodb-log-group-home-dir=/var/lib/mysql-data/redo",
	)
	if err := os.MkdirAll(filepath.Join(root, "var/lib/mysql-data/redo"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(filepath.Join(root, "var/lib/mysql-data/redo"), 999, 999); err != nil {
		t.Fatal(err)
	}
	// As the kubelet: the exit code says. Without credentials the
	// server answers "Access denied", which ping counts as alive.
	probe := []string{"mariadb-admin", "ping", "-h", "127.0.0.1", "-P", fmt.Sprint(port)}

	start := time.Now()
	s := imagestest.Start(t, root, env, args...)
	imagestest.WaitReady(t, s, root, env, "", probe...)
	t.Logf("first start (install-db) ready in %s", time.Since(start).Round(time.Millisecond))
	if strings.Contains(s.Output(), password) {
		t.Errorf("the entrypoint printed the password")
	}
	if _, err := os.Stat(filepath.Join(root, "var/lib/mysql-data/redo/ib_logfile0")); err != nil {
		t.Errorf("the redo log is not where --innodb-log-group-home-dir says: %v", err)
	}

	dsn := func(user, pass string) string {
		c := mysql.NewConfig()
		c.User, c.Passwd, c.Net, c.Addr, c.DBName = user, pass, "tcp", fmt.Sprintf("127.0.0.1:%d", port), "bench"
		c.Timeout = 5 * time.Second
		return c.FormatDSN()
	}
	ctx := context.Background()
	db, err := sql.Open("mysql", dsn("bench", password))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var one int
	if err := db.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1 as the user: %d, %v\n%s", one, err, s.Output())
	}
	var charset string
	if err := db.QueryRowContext(ctx, "SELECT @@character_set_server").Scan(&charset); err != nil || charset != "utf8mb4" {
		t.Errorf("character_set_server %q, %v; want utf8mb4", charset, err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE kept (v int)"); err != nil {
		t.Fatalf("CREATE TABLE in the user's database: %v", err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO kept VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for what, d := range map[string]string{
		"no password":    dsn("bench", ""),
		"wrong password": dsn("bench", "wrong"),
		"root over TCP":  dsn("root", ""),
	} {
		db, err := sql.Open("mysql", d)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.PingContext(ctx); err == nil {
			t.Errorf("login with %s succeeded", what)
		}
		db.Close()
	}

	// The second start finds mysql/ and only runs the server.
	s.Stop(t, syscall.SIGTERM)
	start = time.Now()
	s = imagestest.Start(t, root, env, args...)
	imagestest.WaitReady(t, s, root, env, "", probe...)
	t.Logf("second start ready in %s", time.Since(start).Round(time.Millisecond))
	if strings.Contains(s.Output(), "initializing") {
		t.Errorf("the second start initialized again:\n%s", s.Output())
	}
	db, err = sql.Open("mysql", dsn("bench", password))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	if err := db.QueryRowContext(ctx, "SELECT v FROM kept").Scan(&v); err != nil || v != 42 {
		t.Errorf("data after a restart: %d, %v", v, err)
	}
}
