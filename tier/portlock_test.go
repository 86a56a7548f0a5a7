package tier

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/tierbench/tierbench/host/tcpport"
	"github.com/tierbench/tierbench/testenv"
)

// connectAs tries to open a TCP connection to port on 127.0.0.1 as uid.
func connectAs(uid uint32, port int) error {
	cmd := exec.Command("bash", "-c", fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d", port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}

// TestLockPortsKeepsOtherUsersOut locks a listening port: root still
// connects, user nobody is refused, and after the lock is removed (also by
// the ledger's cleanup, as after a kill) nobody connects again.
func TestLockPortsKeepsOtherUsersOut(t *testing.T) {
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
	if err := connectAs(nobody, port); err != nil {
		t.Fatalf("before the lock, nobody cannot connect: %v", err)
	}
	led, err := OpenLedger(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := &Workspace{ledger: led}
	name := "test-" + fmt.Sprint(port)
	unlock, err := ws.LockPorts(name, []int{port}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if err := connectAs(0, port); err != nil {
		t.Errorf("root is refused by the lock: %v", err)
	}
	if err := connectAs(nobody, port); err == nil {
		t.Error("user nobody connected through the lock")
	}
	// A killed tierbench leaves the table: cleanup undoes its record.
	if err := Undo(Resource{Kind: KindPortLock, Path: tcpport.LockTable(name)}); err != nil {
		t.Fatal(err)
	}
	if err := connectAs(nobody, port); err != nil {
		t.Errorf("after cleanup, nobody still cannot connect: %v", err)
	}
}
