package proc

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
)

// LookupUser resolves a user name to uid and gid.
func LookupUser(name string) (uid, gid int, err error) {
	u, err := user.Lookup(name)
	if err != nil {
		return 0, 0, fmt.Errorf("user %s: %w", name, err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid, nil
}

// RunAs picks the OS user a server runs as: as root, the first of users
// that exists (a server other local users can reach must not hold root);
// otherwise tierbench's own user (""), which then owns every folder
// already. pkg is the package whose install creates users[0], for the
// error when none exists.
func RunAs(program, pkg string, users ...string) (string, error) {
	if os.Geteuid() != 0 {
		return "", nil
	}
	for _, u := range users {
		if _, _, err := LookupUser(u); err == nil {
			return u, nil
		}
	}
	return "", fmt.Errorf("%s must not run as root, and none of the OS users %s exists (apt-get install %s creates user %s)",
		program, strings.Join(users, ", "), pkg, users[0])
}

// ChownAll gives folders (recursively) to the user a server runs as.
func ChownAll(userName string, dirs ...string) error {
	uid, gid, err := LookupUser(userName)
	if err != nil {
		return err
	}
	for _, d := range dirs {
		cmd := exec.Command("chown", "-R", fmt.Sprintf("%d:%d", uid, gid), d)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("chown %s to %s: %v: %s", d, userName, err, out)
		}
	}
	return nil
}

// RemoveEmptyPerfData removes /tmp/hsperfdata_USER once it is empty: the
// folder a JVM makes for its perf data and leaves behind when it exits
// (HotSpot puts it in /tmp, whatever TMPDIR says). tierbench's JVMs start
// without it (-XX:-UsePerfData), but the scripts of Elasticsearch 6 start
// a version check with no options of ours (they unset JAVA_TOOL_OPTIONS).
// Only a server user's folder, never root's, and only when empty
// (os.Remove is rmdir): a JVM still running keeps its file in it.
func RemoveEmptyPerfData(userName string) {
	if userName != "" && userName != "root" {
		_ = os.Remove("/tmp/hsperfdata_" + userName)
	}
}

// OwnerName is the name of the user process pid runs as; "" when the
// process or its user is gone.
func OwnerName(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" {
			if u, err := user.LookupId(f[1]); err == nil {
				return u.Username
			}
		}
	}
	return ""
}
