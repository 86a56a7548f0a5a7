package tcpport

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// Lock closes TCP ports on the loopback addresses to every local
// user but root and uids, with an nftables table of its own. It is how a
// server without authentication of its own (OpenSearch without its
// security plugin, Elasticsearch OSS) is kept from other local users:
// their connections are refused by the kernel, whatever they send. table
// names it ("tierbench_<id>").
func Lock(table string, ports, uids []int) error {
	if len(ports) == 0 {
		return fmt.Errorf("lock ports: no port given")
	}
	allowed := []string{"0"}
	for _, u := range uids {
		if u != 0 {
			allowed = append(allowed, strconv.Itoa(u))
		}
	}
	var ps []string
	for _, p := range ports {
		ps = append(ps, strconv.Itoa(p))
	}
	rules := fmt.Sprintf(`table inet %s {
	chain out {
		type filter hook output priority 0; policy accept;
		oifname "lo" tcp dport { %s } meta skuid != { %s } reject with tcp reset
	}
}
`, table, strings.Join(ps, ", "), strings.Join(allowed, ", "))
	cmd := exec.Command("nft", "-f", "-")
	cmd.Stdin = strings.NewReader(rules)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("close ports %s to other local users with nftables (apt-get install nftables): %v: %s",
			strings.Join(ps, ", "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Unlock removes a Lock's table; one already gone is fine.
func Unlock(table string) error {
	out, err := exec.Command("nft", "delete", "table", "inet", table).CombinedOutput()
	if err != nil && !strings.Contains(string(out), "No such file or directory") {
		return fmt.Errorf("remove nftables table %s: %v: %s", table, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// LockTable names the nftables table of a lock on name's ports: letters,
// digits and underscores only.
func LockTable(name string) string {
	return "tierbench_" + strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, name)
}
