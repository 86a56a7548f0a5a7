package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/host/secrets"
	"github.com/tierbench/tierbench/testenv"
)

// connect logs in to d's server with pgx: over TCP (host 127.0.0.1) or the
// socket (host d.sockDir), with password (none when empty).
func connect(t *testing.T, d *DB, host, password string) error {
	t.Helper()
	cc, err := pgx.ParseConfig(fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable connect_timeout=5", host, d.port, osUser, database))
	if err != nil {
		t.Fatal(err)
	}
	cc.Password = password
	c, err := pgx.ConnectConfig(context.Background(), cc)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	var one int
	return c.QueryRow(context.Background(), "SELECT 1").Scan(&one)
}

// asNobody runs psql as OS user nobody, another local user without the
// run's secret, and returns its output and error.
func asNobody(t *testing.T, args ...string) (string, error) {
	t.Helper()
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		testenv.Skip(t, "setpriv is not installed (util-linux)")
	}
	bins, err := findBinaries()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(setpriv, append([]string{"--reuid=nobody", "--regid=nogroup", "--clear-groups", bins.psql, "-X", "-w"}, args...)...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "PGCONNECT_TIMEOUT=5"}
	cmd.Dir = "/"
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestLocalUsersLockedOut checks that while a run's server runs no one
// gets in without the run's password: not over 127.0.0.1 without it or
// with a wrong one, not over the socket (root is not the postgres OS user),
// not another OS user with psql; that the socket lives in a private folder
// in the scratch folder and nothing in /tmp; that the password is on no
// command line and in no environment; and that nothing is left after
// Close.
func TestLocalUsersLockedOut(t *testing.T) {
	needPostgres(t)
	cfg := testConfig(t, engine.Sync, nil)
	d := openTest(t, cfg)
	exerciseRecords(t, d, 10)
	port := strconv.Itoa(d.port)

	// (a) The run's password is needed, and enough.
	if err := connect(t, d, "127.0.0.1", d.password); err != nil {
		t.Fatalf("login with the run's password: %v", err)
	}
	for _, c := range []struct{ name, host, password, want string }{
		{"tcp without password", "127.0.0.1", "", "SQLSTATE 28P01"},
		{"tcp with a wrong password", "127.0.0.1", "not-the-password", "SQLSTATE 28P01"},
		{"socket as root", d.sockDir, "", "SQLSTATE 28000"}, // peer: root is not postgres
	} {
		err := connect(t, d, c.host, c.password)
		t.Logf("%s: %v", c.name, err)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want refused (%s)", c.name, err, c.want)
		}
	}

	// (b) Another local user without the secret.
	for _, c := range []struct{ name, host, want string }{
		{"tcp", "127.0.0.1", "password"},
		{"socket", d.sockDir, "Permission denied"},
	} {
		out, err := asNobody(t, "-h", c.host, "-p", port, "-U", osUser, "-d", database, "-c", "COPY (SELECT 1) TO PROGRAM 'id'")
		t.Logf("nobody over %s: %s", c.name, strings.TrimSpace(out))
		if err == nil || !strings.Contains(out, c.want) {
			t.Errorf("nobody over %s: %v: %s; want refused (%s)", c.name, err, out, c.want)
		}
	}

	// (c) The password is on no command line and in no environment.
	if shown := secrets.ProcessesShowing(d.password, true); len(shown) > 0 {
		t.Errorf("processes showing the run's password: %q", shown)
	}

	// (d) The socket: in a private folder in the scratch folder, nothing
	// in /tmp.
	st, err := os.Stat(d.sockDir)
	if err != nil {
		t.Fatal(err)
	}
	pg, _ := lookupOSUser()
	if st.Mode().Perm() != 0o700 || int(st.Sys().(*syscall.Stat_t).Uid) != pg.uid {
		t.Errorf("socket folder %s: mode %v uid %d, want 0700 owned by postgres", d.sockDir, st.Mode(), st.Sys().(*syscall.Stat_t).Uid)
	}
	if filepath.Dir(d.sockDir) != cfg.Scratch {
		t.Errorf("socket folder %s is not in the scratch folder %s", d.sockDir, cfg.Scratch)
	}
	if sst, err := os.Stat(socketPath(d.sockDir, d.port)); err != nil || sst.Mode()&os.ModeSocket == 0 || sst.Mode().Perm() != 0o700 {
		t.Errorf("socket %s: %v %v", socketPath(d.sockDir, d.port), sst, err)
	}
	tmpSockets := func() []string {
		m, _ := filepath.Glob("/tmp/.s.PGSQL." + port + "*")
		return m
	}
	if m := tmpSockets(); len(m) > 0 {
		t.Errorf("the run's server has a socket in /tmp: %v", m)
	}

	// The password is in no record: the role holds a SCRAM verifier, the
	// server's log and the version do not name it.
	var stored string
	if err := d.db.QueryRowContext(context.Background(), "SELECT rolpassword FROM pg_authid WHERE rolname = $1", osUser).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stored, "SCRAM-SHA-256$4096:") {
		t.Errorf("role %s's stored password %q is not a SCRAM verifier", osUser, stored)
	}
	if log, err := os.ReadFile(filepath.Join(d.dataDir, logName)); err != nil || strings.Contains(string(log), d.password) {
		t.Errorf("server log: %v; holds the password: %v", err, strings.Contains(string(log), d.password))
	}
	if strings.Contains(d.Version(), d.password) || strings.Contains(engine.RedactTarget(d.Endpoint().URL()), d.password) {
		t.Errorf("version %q or redacted endpoint shows the password", d.Version())
	}

	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d.sockDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket folder %s left after Close: %v", d.sockDir, err)
	}
	if m := tmpSockets(); len(m) > 0 {
		t.Errorf("sockets left in /tmp after Close: %v", m)
	}
}

// TestKilledLeavesNoTmpSocket checks that a server killed with kill -9
// (as when tierbench is killed: its parent-death signal) leaves its socket
// and lock file only in its socket folder, which Close removes.
func TestKilledLeavesNoTmpSocket(t *testing.T) {
	needPostgres(t)
	d := openTest(t, testConfig(t, engine.Sync, nil))
	if err := syscall.Kill(d.proc.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.proc.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("server did not exit after kill -9")
	}
	if _, err := os.Stat(socketPath(d.sockDir, d.port) + ".lock"); err != nil {
		t.Errorf("a killed server's lock file is not in its socket folder: %v", err)
	}
	_ = d.Close()
	if m, _ := filepath.Glob(fmt.Sprintf("/tmp/.s.PGSQL.%d*", d.port)); len(m) > 0 {
		t.Errorf("left in /tmp: %v", m)
	}
	if _, err := os.Stat(d.sockDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket folder left after Close: %v", err)
	}
}

// TestPasswordPerRun checks that every Open sets a new password, a
// reopened cluster too, and that the last run's password no longer opens
// it.
func TestPasswordPerRun(t *testing.T) {
	needPostgres(t)
	cfg := testConfig(t, engine.Sync, nil)
	d := openTest(t, cfg)
	first := d.password
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d2 := openTest(t, cfg)
	if d2.password == first || len(d2.password) != 32 {
		t.Fatalf("reopen kept password or made a short one: %d characters", len(d2.password))
	}
	if err := connect(t, d2, "127.0.0.1", first); err == nil {
		t.Error("the previous run's password opens the reopened cluster")
	}
}

// TestSocketFolderTooLong checks that a scratch folder too long for a
// socket path puts the private socket folder in the temporary folder.
func TestSocketFolderTooLong(t *testing.T) {
	needPostgres(t)
	long := filepath.Join(folder(t, "scratch"), strings.Repeat("s", 100))
	if err := os.Mkdir(long, 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := socketFolder(long)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if filepath.Dir(dir) != filepath.Clean(os.TempDir()) || len(socketPath(dir, 65535)) > maxSocketPath {
		t.Errorf("socket folder for a long scratch path: %s", dir)
	}
}

// TestScramVerifier checks the verifier's form and that each has its own
// salt; that PostgreSQL accepts it is TestLocalUsersLockedOut's login.
func TestScramVerifier(t *testing.T) {
	form := regexp.MustCompile(`^SCRAM-SHA-256\$4096:[A-Za-z0-9+/]{22}==\$[A-Za-z0-9+/]{43}=:[A-Za-z0-9+/]{43}=$`)
	a, err := scramVerifier("0123456789abcdef0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := scramVerifier("0123456789abcdef0123456789abcdef")
	if !form.MatchString(a) || a == b {
		t.Errorf("verifiers %q, %q", a, b)
	}
}
