package tcpport

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"

	"github.com/tierbench/tierbench/testenv"
)

// TestFreeNAreDistinct asks for more ports at once than a bind that
// freed each port before the next could ever be trusted to keep apart.
func TestFreeNAreDistinct(t *testing.T) {
	ports, err := FreeN(200)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if seen[p] {
			t.Fatalf("port %d handed out twice in %v", p, ports)
		}
		seen[p] = true
	}
}

func TestLockTable(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"opensearch-r1", "tierbench_opensearch_r1"},
		{"a b/c", "tierbench_a_b_c"},
		{"Node42", "tierbench_Node42"},
	} {
		if got := LockTable(c.name); got != c.want {
			t.Errorf("LockTable(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestLockKeepsOtherUsersOut locks a listening port: root still connects,
// user nobody is refused, and after Unlock nobody connects again.
func TestLockKeepsOtherUsersOut(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "nftables needs root")
	}
	if _, err := exec.LookPath("nft"); err != nil {
		testenv.Skip(t, "nft not installed (apt-get install nftables)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	const nobody = 65534
	table := LockTable("tcpport-test-" + strconv.Itoa(port))
	if err := Lock(table, []int{port}, nil); err != nil {
		t.Fatal(err)
	}
	defer Unlock(table)
	if err := connectAs(0, port); err != nil {
		t.Errorf("root is refused by the lock: %v", err)
	}
	if err := connectAs(nobody, port); err == nil {
		t.Error("user nobody connected through the lock")
	}
	if err := Unlock(table); err != nil {
		t.Fatal(err)
	}
	if err := connectAs(nobody, port); err != nil {
		t.Errorf("after Unlock, nobody still cannot connect: %v", err)
	}
	if err := Unlock(table); err != nil {
		t.Errorf("a second Unlock: %v", err)
	}
}

// connectAs tries to open a TCP connection to port on 127.0.0.1 as uid.
func connectAs(uid uint32, port int) error {
	cmd := exec.Command("bash", "-c", fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d", port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}
