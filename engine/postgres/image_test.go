package postgres

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tierbench/tierbench/images/imagestest"
)

// TestLabImage runs the image's entrypoint as the engine's pod does:
// uid 999, fresh PGDATA and WAL folders, the password from the
// environment; checks that the readiness probe passes and that a TCP
// login needs the password; then starts it again on the same data.
func TestLabImage(t *testing.T) {
	r, err := Engine{}.LabImage()
	if err != nil {
		t.Fatal(err)
	}
	root := imagestest.UnpackRoot(t, imagestest.Build(t, r))
	imagestest.Volume(t, root, "/var/lib/postgresql/data")
	imagestest.Volume(t, root, "/var/lib/postgresql/wal")
	port := imagestest.FreePort(t)
	password := imagestest.Secret()
	env := imagestest.Env(r,
		"PGDATA=/var/lib/postgresql/data/pgdata",
		"POSTGRES_INITDB_WALDIR=/var/lib/postgresql/wal/pg_wal",
		"POSTGRES_USER=postgres",
		"POSTGRES_DB=bench", // not postgres: the entrypoint's temporary server makes it
		"POSTGRES_PASSWORD="+password,
		"POSTGRES_HOST_AUTH_METHOD=scram-sha-256",
		"POSTGRES_INITDB_ARGS=--auth-host=scram-sha-256 --auth-local=scram-sha-256",
	)
	args := append(r.Config.Entrypoint, "postgres", "-c", "listen_addresses=127.0.0.1", "-c", fmt.Sprintf("port=%d", port))
	probe := []string{"pg_isready", "-h", "127.0.0.1", "-p", fmt.Sprint(port), "-U", "postgres", "-d", "postgres"}

	start := time.Now()
	s := imagestest.Start(t, root, env, args...)
	imagestest.WaitReady(t, s, root, env, "accepting connections", probe...)
	t.Logf("first start (initdb) ready in %s", time.Since(start).Round(time.Millisecond))
	if strings.Contains(s.Output(), password) {
		t.Errorf("the entrypoint printed the password")
	}
	if link, err := os.Readlink(filepath.Join(root, "var/lib/postgresql/data/pgdata/pg_wal")); err != nil || link != "/var/lib/postgresql/wal/pg_wal" {
		t.Errorf("pg_wal: %q, %v; want a link to the WAL folder", link, err)
	}
	if st, err := os.Stat(filepath.Join(root, "var/lib/postgresql/data/pgdata")); err != nil || st.Mode().Perm() != 0o700 || st.Sys().(*syscall.Stat_t).Uid != 999 {
		t.Errorf("PGDATA: %v, %v; want mode 0700, owned by 999", st.Mode(), err)
	}

	ctx := context.Background()
	url := func(user, pass, db string) string {
		return fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/%s?sslmode=disable", user, pass, port, db)
	}
	conn, err := pgx.Connect(ctx, url("postgres", imagestest.URLEscape(password), "bench"))
	if err != nil {
		t.Fatalf("login with the password: %v\n%s", err, s.Output())
	}
	var one int
	if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Errorf("SELECT 1: %d, %v", one, err)
	}
	var enc string
	if err := conn.QueryRow(ctx, "SHOW server_encoding").Scan(&enc); err != nil || enc != "UTF8" {
		t.Errorf("server_encoding %q, %v; want UTF8", enc, err)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE kept (v int); INSERT INTO kept VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	for _, u := range []string{url("postgres", "", "postgres"), url("postgres", "wrong", "postgres")} {
		if c, err := pgx.Connect(ctx, u); err == nil {
			c.Close(ctx)
			t.Errorf("login without the right password succeeded")
		}
	}

	// The second start finds PG_VERSION and only runs the server.
	s.Stop(t, syscall.SIGINT)
	start = time.Now()
	s = imagestest.Start(t, root, env, args...)
	imagestest.WaitReady(t, s, root, env, "accepting connections", probe...)
	t.Logf("second start ready in %s", time.Since(start).Round(time.Millisecond))
	if strings.Contains(s.Output(), "init process complete") {
		t.Errorf("the second start ran initdb again:\n%s", s.Output())
	}
	conn, err = pgx.Connect(ctx, url("postgres", imagestest.URLEscape(password), "bench"))
	if err != nil {
		t.Fatalf("login after a restart: %v", err)
	}
	defer conn.Close(ctx)
	var v int
	if err := conn.QueryRow(ctx, "SELECT v FROM kept").Scan(&v); err != nil || v != 42 {
		t.Errorf("data after a restart: %d, %v", v, err)
	}
}
