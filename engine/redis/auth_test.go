package redis

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/host/reach"
	"github.com/tierbench/tierbench/host/secrets"
	"github.com/tierbench/tierbench/testenv"
)

// needRoot skips a test of what tierbench does as root: run the server as
// another OS user.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs root: the server runs as user redis only when tierbench is root")
	}
}

// asNobody runs a command as OS user nobody, another local user without
// the run's secret, and returns its output and error.
func asNobody(t *testing.T, args ...string) (string, error) {
	t.Helper()
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		testenv.Skip(t, "setpriv is not installed (util-linux)")
	}
	cmd := exec.Command(setpriv, append([]string{"--reuid=nobody", "--regid=nogroup", "--clear-groups"}, args...)...)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.Dir = "/"
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// uidOf reads the real uid of process pid.
func uidOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" {
			uid, _ := strconv.Atoi(f[1])
			return uid
		}
	}
	t.Fatalf("no Uid line in /proc/%d/status", pid)
	return -1
}

// TestLocalUsersLockedOut checks that a run's server runs as user redis,
// not root, in a data folder only it may enter; that no client gets in
// without the run's password (another OS user neither); that the password
// is on no command line, in no environment and, once the server has read
// it, in no file; and that the version and redacted endpoint do not show
// it.
func TestLocalUsersLockedOut(t *testing.T) {
	needRoot(t)
	db := openTest(t, engine.Sync, nil)
	load(t, session(t, db), 0, 5)
	ctx := context.Background()

	// (e) Not root: the Debian package's user.
	uid, _, err := proc.LookupUser(serverUsers[0])
	if err != nil {
		testenv.Skip(t, err)
	}
	if got := uidOf(t, db.PID()); got == 0 || got != uid {
		t.Errorf("redis-server runs as uid %d, want %s's %d", got, serverUsers[0], uid)
	}
	st, err := os.Stat(db.data)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o700 || int(st.Sys().(*syscall.Stat_t).Uid) != uid {
		t.Errorf("data folder mode %v owner %d, want 0700 owned by %s", st.Mode(), st.Sys().(*syscall.Stat_t).Uid, serverUsers[0])
	}

	// (a) Without the password, or with a wrong one: refused.
	for _, c := range []struct{ name, password, want string }{
		{"no password", "", "NOAUTH"},
		{"wrong password", "not-the-password", "WRONGPASS"},
	} {
		opts := clientOptions(db.addr)
		opts.Password = c.password
		cl := goredis.NewClient(opts)
		err := cl.Set(ctx, "intruder", "x", 0).Err()
		cl.Close()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: SET = %v; want %s", c.name, err, c.want)
		}
	}

	// (b) Another local user: no way in through the port or the files.
	if cli, err := exec.LookPath("redis-cli"); err == nil {
		host, port, _ := strings.Cut(db.addr, ":")
		out, _ := asNobody(t, cli, "-h", host, "-p", port, "SET", "intruder", "x")
		t.Logf("nobody's redis-cli SET: %s", strings.TrimSpace(out))
		if !strings.Contains(out, "NOAUTH") {
			t.Errorf("nobody's redis-cli SET: %q; want NOAUTH", out)
		}
	}
	if out, err := asNobody(t, "ls", filepath.Join(db.data, "appendonlydir")); err == nil || !strings.Contains(out, "Permission denied") {
		t.Errorf("nobody lists the AOF folder: %v: %s", err, out)
	}
	if n, err := db.client.Exists(ctx, "intruder").Result(); err != nil || n != 0 {
		t.Errorf("intruder key exists: %d, %v", n, err)
	}

	// (c) The password is on no command line, in no environment, and its
	// config file is gone.
	if shown := secrets.ProcessesShowing(db.password, true); len(shown) > 0 {
		t.Errorf("processes showing the run's password: %q", shown)
	}
	if left, _ := filepath.Glob(filepath.Join(db.scratch, "redis-conf-*")); len(left) > 0 {
		t.Errorf("config folders left with the password: %v", left)
	}
	// 4: nothing recorded shows it.
	log, _ := os.ReadFile(filepath.Join(db.data, LogName))
	for what, text := range map[string]string{"version": db.Version(), "log": string(log),
		"redacted endpoint": engine.RedactTarget(db.Endpoint().URL())} {
		if strings.Contains(text, db.password) {
			t.Errorf("the %s shows the password", what)
		}
	}
	if ep := db.Endpoint(); ep.Password != db.password {
		t.Error("the endpoint does not carry the run's password for tools")
	}
}

// TestUnreachableFolder checks the error when user redis cannot enter a
// parent of the data folder: it names the folder and the fix.
func TestUnreachableFolder(t *testing.T) {
	needRoot(t)
	needRedis(t)
	private := filepath.Join(reachable(t), "private")
	data := filepath.Join(private, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(private, 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := Engine{}.Open(context.Background(), engine.Config{Dirs: map[string]string{Data: data}, Durability: engine.Sync, Options: Engine{}.Spec().MustResolveOptions(nil)})
	if err == nil {
		db.Close()
		t.Fatal("opened a data folder user redis cannot reach")
	}
	t.Log(err)
	if !strings.Contains(err.Error(), "chmod o+x "+private) || !errors.Is(err, reach.ErrUnreachable) {
		t.Errorf("error does not name the folder and the fix: %v", err)
	}
}

// TestConfFallsBackToTmp checks that a scratch folder user redis cannot
// reach (under t.TempDir()'s 0700 parents) still opens: the config file's
// private folder goes to the temporary folder, and is gone after Open.
func TestConfFallsBackToTmp(t *testing.T) {
	needRoot(t)
	needRedis(t)
	data := filepath.Join(reachable(t), "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "tierbench-redis-conf-*"))
	db, err := Engine{}.Open(context.Background(), engine.Config{Dirs: map[string]string{Data: data}, Durability: engine.Sync, Options: Engine{}.Spec().MustResolveOptions(nil), Scratch: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if after, _ := filepath.Glob(filepath.Join(os.TempDir(), "tierbench-redis-conf-*")); len(after) > len(before) {
		t.Errorf("config folders left in the temporary folder: %v", after)
	}
	session(t, db)
}
