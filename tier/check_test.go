package tier

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/testenv"
)

func TestCheckName(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"ssd", true}, {"pm_1", true}, {"fast-2", true}, {"A9", true},
		{"../../../../tmp/x", false}, {"a/b", false}, {"..", false}, {".hidden", false},
		{"-flag", false}, {"", false}, {"with space", false}, {strings.Repeat("x", 65), false},
	} {
		err := CheckName(c.name)
		if (err == nil) != c.ok {
			t.Errorf("CheckName(%q) = %v, want ok=%v", c.name, err, c.ok)
		}
	}
}

// TestCheckIdentifier checks what the one name check says of each kind
// of bad name: one short line naming the problem, the name escaped and
// cut short, never printed raw.
func TestCheckIdentifier(t *testing.T) {
	for _, c := range []struct {
		name, want string
	}{
		{strings.Repeat("x", 100000), `placement name "xxxxxxxxxxxxxxxxxxxxxxxx"... is too long (100000 characters): use letters`},
		{"\x1b[31mred", `placement name "\x1b[31mred" holds a control or bidirectional character (U+001B)`},
		{"a\nb", `placement name "a\nb" holds a control or bidirectional character (U+000A)`},
		{"a\x00b", `placement name "a\x00b" holds a control or bidirectional character (U+0000)`},
		{"\u202eevil", `placement name "\u202eevil" holds a control or bidirectional character (U+202E)`},
		{"zero\u200bwidth", `placement name "zero\u200bwidth" holds a control or bidirectional character (U+200B)`},
		{"a b", `placement name "a b" is not an identifier: use letters, digits, - and _ (at most 64, starting with a letter or digit), e.g. wal-ram; reports name it`},
	} {
		err := CheckIdentifier("placement", c.name, "wal-ram", "reports name it")
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("CheckIdentifier(%q) = %v, want %q...", Excerpt(c.name), err, c.want)
			continue
		}
		if msg := err.Error(); len(msg) > 300 || strings.ContainsFunc(msg, hidden) {
			t.Errorf("CheckIdentifier(%q) says %q: want one short line of printable text", Excerpt(c.name), msg)
		}
	}
	if err := CheckIdentifier("placement", "wal-ram", "x", "y"); err != nil {
		t.Errorf("CheckIdentifier(wal-ram) = %v", err)
	}
}

// TestCheckPathRefusesSystemFolders checks the folders a tier must never
// be, directly or through a symlink, and the exceptions meant for data.
func TestCheckPathRefusesSystemFolders(t *testing.T) {
	dir := t.TempDir()
	etc := filepath.Join(dir, "etc-link")
	if err := os.Symlink("/etc", etc); err != nil {
		t.Fatal(err)
	}
	below := filepath.Join(dir, "usr-link")
	if err := os.Symlink("/usr", below); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path, want string // want "" means allowed
	}{
		{"/", "the root folder"},
		{"/etc", "system folder (/etc)"},
		{"/etc/tierbench", "system folder (/etc)"},
		{"/proc", "system folder (/proc)"},
		{"/sys/fs/cgroup", "system folder (/sys)"},
		{"/dev", "system folder (/dev)"},
		{"/boot", "system folder (/boot)"},
		{"/usr/local/tiers", "system folder (/usr)"},
		{"/run", "system folder (/run)"},
		{"/run/user", "one folder per user"},
		{etc, "(a symlink to /etc) is a system folder (/etc)"},
		{below + "/new", "(a symlink to /usr/new) is a system folder (/usr)"},
		{dir, ""},
	}
	if _, err := os.Stat("/dev/shm"); err == nil {
		cases = append(cases, struct{ path, want string }{"/dev/shm", ""})
	}
	for _, c := range cases {
		err := CheckPath(c.path)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("CheckPath(%s): %v, want ok", c.path, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("CheckPath(%s) = %v, want it to say %q", c.path, err, c.want)
		}
	}
}

// TestResolve checks that a symlinked tier resolves once to its real
// folder, also when the tier folder itself does not exist yet.
func TestResolve(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink(filepath.Join(dir, "gone"), dangling); err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		link:                        real,
		link + "/":                  real,
		filepath.Join(link, "tier"): filepath.Join(real, "tier"),
		real:                        real,
	} {
		if got, err := Resolve(in); err != nil || got != want {
			t.Errorf("Resolve(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := Resolve(dangling); err == nil || !strings.Contains(err.Error(), "symlink to a folder that does not exist") {
		t.Errorf("Resolve(dangling) = %v", err)
	}
	if _, err := Resolve("relative/tier"); err == nil || !strings.Contains(err.Error(), "not absolute") {
		t.Errorf("Resolve(relative) = %v", err)
	}
	info, err := Prepare("disk", link)
	if err != nil {
		t.Fatal(err)
	}
	if info.Path != real {
		t.Errorf("Prepare recorded %s, want the real folder %s", info.Path, real)
	}
}

// TestPseudoFilesystemRefused mounts a proc filesystem on a folder that is
// not a system folder: the path rule cannot see it, the filesystem rule
// must refuse it, and Inspect must not call it durable.
func TestPseudoFilesystemRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs root to mount proc")
	}
	dir := filepath.Join(t.TempDir(), "proc")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("proc", dir, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		testenv.Skipf(t, "cannot mount proc here: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	if err := CheckPath(dir); err == nil || !strings.Contains(err.Error(), "is on proc") {
		t.Errorf("CheckPath(proc mount) = %v, want a pseudo filesystem refusal", err)
	}
	info, err := Inspect("p", dir)
	if err != nil {
		t.Fatal(err)
	}
	if info.Durable || !strings.Contains(info.Note, "kernel interface") {
		t.Errorf("Inspect(proc) = %+v, want not durable with a note", info)
	}
}

func TestFreeBytes(t *testing.T) {
	dir := t.TempDir()
	free, at, err := FreeBytes(filepath.Join(dir, "not", "yet"))
	if err != nil || at != dir || free <= 0 {
		t.Errorf("FreeBytes(missing below %s) = %d, %s, %v", dir, free, at, err)
	}
}
