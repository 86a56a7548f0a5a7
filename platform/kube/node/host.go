package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/host/procfs"
	"github.com/tierbench/tierbench/tier"
)

// KindNode is the ledger record of a node: recorded before anything of
// the node starts, undone (by cluster down, or by cleanup after a kill -9
// of the process that ran the node) by one sweep that puts the machine
// back as it was: every process of the node and of its pods, their
// mounts, the bridge, the node's iptables chains and nftables tables, its
// cgroups, the sysctls the kubelet and the bridge plugin change, and its
// folders. The record lists what was there before, so that nothing
// tierbench did not make is removed.
const KindNode = "kube-node"

func init() {
	tier.RegisterKind(KindNode, tier.KindFuncs{Undo: undoNode, Describe: func(r tier.Resource) string {
		return "single-node Kubernetes cluster in " + r.Path
	}})
}

// record is a node's ledger data: what the sweep undoes and what it
// must leave alone.
type record struct {
	Dir string `json:"dir"` // the node's folder
	Run string `json:"run"` // containerd's state folder
	// Sysctls are the values of the kernel settings a node changes, read
	// before it started.
	Sysctls map[string]string `json:"sysctls"`
	// Chains are the iptables chains ("iptables/nat/CNI-x") there before.
	Chains []string `json:"chains"`
	// NftTables are the nftables tables ("ip kube-proxy") there before.
	NftTables []string `json:"nft_tables"`
	// MadeDirs are fixed folders the node's programs use that did not
	// exist before (/run/netns, /var/log/containers...).
	MadeDirs []string `json:"made_dirs"`
	// Cgroups is whether the kubelet's kubepods hierarchy is the node's
	// (it did not exist before).
	Cgroups bool `json:"cgroups"`
}

// sysctls are the kernel settings a node changes: the kubelet's
// (overcommit, panic on oops, key quotas), the bridge plugin's
// (forwarding) and kube-proxy's (local routing, conntrack).
var sysctls = []string{
	"vm.overcommit_memory", "vm.panic_on_oom", "kernel.panic", "kernel.panic_on_oops",
	"kernel.keys.root_maxkeys", "kernel.keys.root_maxbytes",
	"net.ipv4.ip_forward", "net.ipv4.conf.all.route_localnet", "net.ipv6.conf.all.forwarding",
	"net.bridge.bridge-nf-call-iptables", "net.bridge.bridge-nf-call-ip6tables",
	"net.netfilter.nf_conntrack_max", "net.netfilter.nf_conntrack_tcp_timeout_established",
	"net.netfilter.nf_conntrack_tcp_timeout_close_wait", "net.netfilter.nf_conntrack_tcp_be_liberal",
}

// fixedDirs are folders the node's programs use whatever they are told.
var fixedDirs = []string{"/run/netns", "/run/containerd", "/var/lib/cni", "/var/log/containers", "/var/lib/kubelet", "/etc/cni"}

// ownChain reports whether an iptables chain is of the kinds a node makes
// (the bridge plugin's CNI-..., the kubelet's and kube-proxy's KUBE-...).
func ownChain(name string) bool {
	return strings.HasPrefix(name, "CNI-") || strings.HasPrefix(name, "KUBE-")
}

// ownTables are kube-proxy's nftables tables, and those iptables-nft
// makes when the kubelet and the bridge plugin first add rules (removed
// only when the node made them).
var ownTables = []string{"ip kube-proxy", "ip6 kube-proxy", "ip filter", "ip nat", "ip mangle", "ip6 filter", "ip6 nat", "ip6 mangle"}

// before reads what is there before a node starts.
func before(dir, run string) record {
	rec := record{Dir: dir, Run: run, Sysctls: map[string]string{}}
	for _, s := range sysctls {
		if v, err := os.ReadFile(sysctlPath(s)); err == nil {
			rec.Sysctls[s] = strings.TrimSpace(string(v))
		}
	}
	rec.Chains = chains()
	rec.NftTables = nftTables()
	for _, d := range fixedDirs {
		if _, err := os.Stat(d); errors.Is(err, os.ErrNotExist) {
			rec.MadeDirs = append(rec.MadeDirs, d)
		}
	}
	rec.Cgroups = len(kubepods()) == 0
	return rec
}

func sysctlPath(name string) string {
	return filepath.Join("/proc/sys", strings.ReplaceAll(name, ".", "/"))
}

// iptables tables a node's programs write.
var ipTables = []string{"filter", "nat", "mangle"}

// chains lists every iptables and ip6tables chain as "cmd/table/name".
func chains() []string {
	var out []string
	for _, cmd := range []string{"iptables", "ip6tables"} {
		for _, t := range ipTables {
			for _, n := range chainNames(cmd, t) {
				out = append(out, cmd+"/"+t+"/"+n)
			}
		}
	}
	return out
}

// chainNames are the chains of one table, as cmd-save lists them.
func chainNames(cmd, table string) []string {
	b, err := exec.Command(cmd+"-save", "-t", table).Output()
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if name, ok := strings.CutPrefix(line, ":"); ok {
			out = append(out, strings.Fields(name)[0])
		}
	}
	return out
}

func nftTables() []string {
	b, err := exec.Command("nft", "list", "tables").Output()
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if t, ok := strings.CutPrefix(strings.TrimSpace(line), "table "); ok {
			out = append(out, t)
		}
	}
	return out
}

// kubepods lists the kubelet's top cgroup in every v1 hierarchy.
func kubepods() []string {
	dirs, _ := filepath.Glob("/sys/fs/cgroup/*/kubepods")
	return dirs
}

func undoNode(r tier.Resource) error {
	var rec record
	if err := json.Unmarshal(r.Extra, &rec); err != nil || rec.Dir == "" {
		return fmt.Errorf("node record %s is unreadable (%v): remove the node's folder by hand", r.Path, err)
	}
	return sweep(rec)
}

// sweep undoes a node, whether it is running, half started or its
// processes were killed; it is idempotent.
func sweep(rec record) error {
	var errs []error
	if err := killAll(rec); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, unmountUnder(rec), deleteLink(bridgeName), removeChains(rec), removeTables(rec))
	if rec.Cgroups {
		errs = append(errs, removeCgroups())
	}
	errs = append(errs, restoreSysctls(rec))
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, d := range append([]string{rec.Dir, rec.Run}, rec.MadeDirs...) {
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", d, err))
		}
	}
	return errors.Join(errs...)
}

// nodeProcesses are the node's processes: those whose command line
// names the node's folders (every program it starts, containerd's shims),
// and those in the node's kubepods cgroups (what runs in the pods).
func nodeProcesses(rec record) []int {
	var pids []int
	all, _ := procfs.PIDs()
	self := os.Getpid()
	for _, pid := range all {
		if pid == self {
			continue
		}
		dir := filepath.Join("/proc", strconv.Itoa(pid))
		cmd, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		line := string(cmd)
		if strings.Contains(line, rec.Dir) || strings.Contains(line, rec.Run) {
			pids = append(pids, pid)
			continue
		}
		if rec.Cgroups {
			cg, _ := os.ReadFile(filepath.Join(dir, "cgroup"))
			if strings.Contains(string(cg), ":/kubepods") {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// killAll kills the node's processes until none is left (for at most a
// minute: a process stuck in the kernel is named).
func killAll(rec record) error {
	deadline := time.Now().Add(time.Minute)
	for {
		pids := nodeProcesses(rec)
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("node processes still there after a minute of SIGKILL: %v", pids)
		}
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// unmountUnder unmounts, deepest first, every mount in the node's
// folders and the network namespaces containerd made for its pods.
func unmountUnder(rec record) error {
	mounts, err := tier.Mounts()
	if err != nil {
		return err
	}
	var points []string
	for _, m := range mounts {
		p := m.Point
		if under(p, rec.Dir) || under(p, rec.Run) || strings.HasPrefix(p, "/run/netns/cni-") || strings.HasPrefix(p, "/var/run/netns/cni-") {
			points = append(points, p)
		}
	}
	slices.SortFunc(points, func(a, b string) int { return len(b) - len(a) })
	var errs []error
	for _, p := range slices.Compact(points) {
		if err := unix.Unmount(p, 0); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
				errs = append(errs, fmt.Errorf("unmount %s: %w", p, err))
			}
		}
		if strings.Contains(p, "/netns/cni-") {
			_ = os.Remove(p)
		}
	}
	return errors.Join(errs...)
}

func under(path, dir string) bool {
	return dir != "" && (path == dir || strings.HasPrefix(path, dir+"/"))
}

func deleteLink(name string) error {
	if _, err := os.Stat("/sys/class/net/" + name); err != nil {
		return nil
	}
	if out, err := exec.Command("ip", "link", "delete", name).CombinedOutput(); err != nil {
		return fmt.Errorf("delete bridge %s: %v: %s", name, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// removeChains removes the node's iptables chains that were not there
// before: first the rules that jump to them from other chains (by rule
// number: a rule's text has quoted comments that do not survive a
// split), then the chains. Pods killed without the CNI's DEL (a node
// swept after a kill -9) leave theirs behind.
func removeChains(rec record) error {
	var errs []error
	for _, cmd := range []string{"iptables", "ip6tables"} {
		for _, t := range ipTables {
			all := chainNames(cmd, t)
			ours := map[string]bool{}
			for _, n := range all {
				if ownChain(n) && !slices.Contains(rec.Chains, cmd+"/"+t+"/"+n) {
					ours[n] = true
				}
			}
			if len(ours) == 0 {
				continue
			}
			for _, chain := range all {
				if ours[chain] {
					continue // flushed with it
				}
				errs = append(errs, deleteJumps(cmd, t, chain, ours))
			}
			for n := range ours {
				_ = exec.Command(cmd, "-t", t, "-F", n).Run()
			}
			for n := range ours {
				if out, err := exec.Command(cmd, "-t", t, "-X", n).CombinedOutput(); err != nil {
					errs = append(errs, fmt.Errorf("%s -t %s -X %s: %v: %s", cmd, t, n, err, strings.TrimSpace(string(out))))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// deleteJumps deletes the rules of chain that jump to one of targets,
// highest number first so that the others keep theirs.
func deleteJumps(cmd, table, chain string, targets map[string]bool) error {
	out, err := exec.Command(cmd, "-t", table, "-L", chain, "-n", "--line-numbers").Output()
	if err != nil {
		return nil // gone
	}
	var nums []int
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !targets[f[1]] {
			continue
		}
		if n, err := strconv.Atoi(f[0]); err == nil {
			nums = append(nums, n)
		}
	}
	var errs []error
	for i := len(nums) - 1; i >= 0; i-- {
		if out, err := exec.Command(cmd, "-t", table, "-D", chain, strconv.Itoa(nums[i])).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("%s -t %s -D %s %d: %v: %s", cmd, table, chain, nums[i], err, strings.TrimSpace(string(out))))
		}
	}
	return errors.Join(errs...)
}

func removeTables(rec record) error {
	have := nftTables()
	var errs []error
	for _, t := range ownTables {
		if !slices.Contains(have, t) || slices.Contains(rec.NftTables, t) {
			continue
		}
		args := append([]string{"delete", "table"}, strings.Fields(t)...)
		if out, err := exec.Command("nft", args...).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("nft delete table %s: %v: %s", t, err, strings.TrimSpace(string(out))))
		}
	}
	return errors.Join(errs...)
}

// removeCgroups removes the kubelet's kubepods cgroups, deepest first, in
// every hierarchy (their processes are gone).
func removeCgroups() error {
	var errs []error
	for _, top := range kubepods() {
		var dirs []string
		_ = filepath.WalkDir(top, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := unix.Rmdir(dirs[i]); err != nil && !errors.Is(err, unix.ENOENT) {
				errs = append(errs, fmt.Errorf("remove cgroup %s: %w", dirs[i], err))
			}
		}
	}
	return errors.Join(errs...)
}

// restoreSysctls puts back every kernel setting that changed.
func restoreSysctls(rec record) error {
	var errs []error
	for name, was := range rec.Sysctls {
		now, err := os.ReadFile(sysctlPath(name))
		if err != nil || strings.TrimSpace(string(now)) == was {
			continue
		}
		if err := os.WriteFile(sysctlPath(name), []byte(was), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("put back %s=%s: %w", name, was, err))
		}
	}
	return errors.Join(errs...)
}
