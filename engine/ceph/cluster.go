package ceph

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/server"
	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/host/secrets"
	"github.com/tierbench/tierbench/host/tcpport"
	"github.com/tierbench/tierbench/tier/syncdelay"

	"github.com/tierbench/tierbench/host/logtail"
)

// The cluster's files in the run's private folder, and the steps that
// make, start and stop its daemons.

// Folders and files in the private folder.
const (
	runDir   = "run"   // admin sockets
	logDir   = "log"   // one log per daemon: mon.a.log, mgr.x.log, osd.0.log, client.rgw.tierbench.log
	crashDir = "crash" // what a crashing daemon dumps (nobody reports it)
	monDir   = "mon"   // the monitor's store: cluster metadata
	mgrDir   = "mgr"   // the manager's keyring
	rgwDir   = "rgw"   // the gateway's keyring
	confFile = "ceph.conf"
	// clientConfFile and adminKeyringFile are the clients': root's only.
	clientConfFile   = "client.conf"
	adminKeyringFile = "client.admin.keyring"
	monKeyringFile   = "mon.keyring"
	monmapFile       = "monmap"
	monID            = "a"
)

// Timing.
const (
	// aioPollMS is how long BlueStore's aio thread waits for completions
	// before it looks again (bdev_aio_poll_ms, 250 by default): each close
	// of a device waits for it, and mkfs and mount open and close them
	// several times. A completion wakes the thread at once either way.
	aioPollMS = 10
	// startTimeout bounds the start of the cluster, to all placement
	// groups active+clean (about 8 s here).
	startTimeout = 3 * time.Minute
	// stepTimeout bounds one ceph command or mkfs.
	stepTimeout = time.Minute
	// stopGrace is how long a daemon may take to stop after SIGTERM
	// before it is killed.
	stopGrace = 20 * time.Second
	// pollEvery is how often the cluster's state is asked for.
	pollEvery = 250 * time.Millisecond
)

// mgrModulePath is where Debian's ceph-mgr keeps its Python modules.
const mgrModulePath = "/usr/share/ceph/mgr"

// cluster is one run's Ceph cluster as files: its settings, where things
// are, its keys and the programs that run it.
type cluster struct {
	settings   settings
	devices    devices
	private    string // the run's private folder, 0700, owned by runAs
	runAs      string
	bins       binaries
	fsid       string
	monAddrs   string // [v2:127.0.0.1:P1,v1:127.0.0.1:P2]
	monV2      string // 127.0.0.1:P1
	keys       keys
	mgrModules []string
	memory     engine.MemoryGroup // every daemon starts in it (the study's memory)
	syncs      syncdelay.Rules    // every daemon starts under them (engine.Config.SyncDelays)
}

// path names a file or folder in the private folder.
func (c *cluster) path(parts ...string) string {
	return filepath.Join(append([]string{c.private}, parts...)...)
}

func (c *cluster) conf() string         { return c.path(confFile) }
func (c *cluster) adminKeyring() string { return c.path(adminKeyringFile) }

// logFile is a daemon's log (name: mon.a, osd.0), made owned by runAs so
// that both the daemon (log_file) and server.Start (its output) write it.
func (c *cluster) logFile(name string) (string, error) {
	path := c.path(logDir, name+".log")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return "", fmt.Errorf("log file: %w", err)
	}
	f.Close()
	if c.runAs != "" {
		if err := proc.ChownAll(c.runAs, path); err != nil {
			return "", fmt.Errorf("log file: %w", err)
		}
	}
	return path, nil
}

// newCluster chooses the run's ports, fsid and keys.
func newCluster(private, runAs string, s settings, devs devices, bins binaries) (*cluster, error) {
	c := &cluster{settings: s, devices: devs, private: private, runAs: runAs, bins: bins, mgrModules: mgrModules()}
	ports, err := tcpport.FreeN(2)
	if err != nil {
		return nil, err
	}
	c.monV2 = "127.0.0.1:" + strconv.Itoa(ports[0])
	c.monAddrs = fmt.Sprintf("[v2:%s,v1:127.0.0.1:%d]", c.monV2, ports[1])
	if c.fsid, err = newUUID(); err != nil {
		return nil, err
	}
	if c.keys, err = newKeys(); err != nil {
		return nil, err
	}
	return c, nil
}

// mgrModules lists the manager's Python modules, all of which the run
// turns off (mgr_disabled_modules): loading them takes 15 s of CPU here,
// and placement group statistics, which is what the run asks the manager
// for, are its own C++ part. The device health module would also make a
// pool of its own.
func mgrModules() []string {
	ents, err := os.ReadDir(mgrModulePath)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && !strings.HasPrefix(e.Name(), "_") {
			out = append(out, e.Name())
		}
	}
	return out
}

// writeFiles writes the configuration and keyrings and makes the folders
// the daemons write in: the daemons' files owned by runAs, the clients'
// (the admin key) by root, all 0600.
func (c *cluster) writeFiles() error {
	for _, d := range []string{runDir, logDir, crashDir, monDir, mgrDir, rgwDir} {
		if err := os.Mkdir(c.path(d), 0o700); err != nil {
			return fmt.Errorf("private folder: %w", err)
		}
	}
	files := []struct {
		path string
		data []byte
		user string
	}{
		{c.conf(), []byte(c.daemonConf()), c.runAs},
		{c.path(clientConfFile), []byte(c.clientConf()), ""},
		{c.adminKeyring(), keyring(c.keys.admin), ""},
		// The monitor's store takes every key but the OSDs' from it.
		{c.path(monKeyringFile), keyring(c.keys.mon, c.keys.admin, c.keys.mgr, c.keys.rgw), c.runAs},
		{c.path(mgrDir, "keyring"), keyring(c.keys.mgr), c.runAs},
		{c.path(rgwDir, "keyring"), keyring(c.keys.rgw), c.runAs},
	}
	for _, f := range files {
		if err := secrets.WriteFile(f.path, f.data, f.user); err != nil {
			return err
		}
	}
	if c.runAs == "" {
		return nil
	}
	for _, d := range []string{runDir, logDir, crashDir, monDir, mgrDir, rgwDir} {
		if err := proc.ChownAll(c.runAs, c.path(d)); err != nil {
			return fmt.Errorf("private folder: %w", err)
		}
	}
	return nil
}

// makeMon writes the monitor map and the monitor's store (ceph-mon
// --mkfs), which takes its keys from the monitor keyring; the keyring is
// then removed.
func (c *cluster) makeMon(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	if _, err := c.logFile("mon." + monID); err != nil {
		return err
	}
	if err := proc.Run(ctx, c.runAs, c.bins.path("monmaptool"), "--create", "--fsid", c.fsid,
		"--addv", monID, c.monAddrs, c.path(monmapFile)); err != nil {
		return fmt.Errorf("monitor map: %w", err)
	}
	if err := proc.Run(ctx, c.runAs, c.bins.path("ceph-mon"), "--conf", c.conf(), "--id", monID, "--mkfs",
		"--monmap", c.path(monmapFile), "--keyring", c.path(monKeyringFile)); err != nil {
		return fmt.Errorf("monitor store: %w; its log: %s", err, logtail.File(c.path(logDir, "mon."+monID+".log"), 10))
	}
	return os.Remove(c.path(monKeyringFile))
}

// daemon is a started Ceph daemon's spec: name is the daemon's log and
// label (mon.a, osd.0), program its binary.
func (c *cluster) daemon(program, name string, track func(int) func(), args ...string) (*server.Process, error) {
	log, err := c.logFile(name)
	if err != nil {
		return nil, err
	}
	return server.Start(server.Spec{
		Name: program + " " + name, Path: c.bins.path(program), Dir: c.private, Log: log, User: c.runAs, Track: track, Memory: c.memory, SyncDelays: c.syncs,
		// -f: in the foreground, logging to its file; it runs as runAs
		// already, so no --setuser.
		Args: append([]string{"-f", "--conf", c.conf()}, args...),
	})
}

// makeOSD registers OSD id with the monitor, with a new key given in a
// 0600 file, and formats its BlueStore (ceph-osd --mkfs), which makes the
// device files on the tiers and their symlinks in the OSD's data folder.
func (c *cluster) makeOSD(ctx context.Context, id int) error {
	ctx, cancel := context.WithTimeout(ctx, 2*stepTimeout)
	defer cancel()
	name := "osd." + strconv.Itoa(id)
	uuid, err := newUUID()
	if err != nil {
		return err
	}
	key, err := newKey()
	if err != nil {
		return err
	}
	secret := c.path(name + ".json")
	if err := secrets.WriteFile(secret, osdSecret(key), ""); err != nil {
		return err
	}
	_, err = c.ceph(ctx, "osd", "new", uuid, strconv.Itoa(id), "-i", secret)
	os.Remove(secret)
	if err != nil {
		return fmt.Errorf("register %s: %w", name, err)
	}
	data := c.path(name)
	if err := os.Mkdir(data, 0o700); err != nil {
		return fmt.Errorf("%s data folder: %w", name, err)
	}
	if c.runAs != "" {
		if err := proc.ChownAll(c.runAs, data); err != nil {
			return fmt.Errorf("%s data folder: %w", name, err)
		}
	}
	if err := secrets.WriteFile(filepath.Join(data, "keyring"), keyring(entity{name: name, key: key}), c.runAs); err != nil {
		return err
	}
	log, err := c.logFile(name)
	if err != nil {
		return err
	}
	if err := proc.Run(ctx, c.runAs, c.bins.path("ceph-osd"), "--conf", c.conf(), "--id", strconv.Itoa(id),
		"--mkfs", "--osd-uuid", uuid); err != nil {
		return fmt.Errorf("format %s: %w; its log: %s", name, err, logtail.File(log, 10))
	}
	return nil
}

// ceph runs the ceph tool as client.admin and returns its output.
func (c *cluster) ceph(ctx context.Context, args ...string) ([]byte, error) {
	return runTool(ctx, c.bins.path("ceph"), []string{"--conf", c.path(clientConfFile), "--id", adminID, "--connect-timeout", "30"}, args...)
}

// runTool runs a client tool with its connection arguments (left out of
// errors) and args, and returns its standard output.
var runTool = proc.Output

// pgStat is what `ceph pg stat -f json` says of the placement groups:
// the manager's view, fresher than `ceph status`, whose copy from the
// monitor lags by a digest period.
type pgStat struct {
	Summary struct {
		ByState []struct {
			Name string `json:"name"`
			Num  int    `json:"num"`
		} `json:"num_pg_by_state"`
		Total int `json:"num_pgs"`
	} `json:"pg_summary"`
}

// clean reports whether there are want placement groups, all
// active+clean, and otherwise how they stand.
func (p pgStat) clean(want int) (bool, string) {
	var clean int
	states := make([]string, 0, len(p.Summary.ByState))
	for _, s := range p.Summary.ByState {
		if s.Name == "active+clean" {
			clean += s.Num
		}
		states = append(states, fmt.Sprintf("%d %s", s.Num, s.Name))
	}
	ok := p.Summary.Total == want && clean == want
	return ok, fmt.Sprintf("%d placement groups: %s", p.Summary.Total, strings.Join(states, ", "))
}

// poolReady reports whether the benchmark pool's placement groups (the
// cluster's only ones until the gateway makes its pools) are all
// active+clean, and otherwise how they stand.
func (c *cluster) poolReady(ctx context.Context) (bool, string, error) {
	out, err := c.ceph(ctx, "pg", "stat", "--format", "json")
	if err != nil {
		return false, "", err
	}
	var st pgStat
	if err := json.Unmarshal(out, &st); err != nil {
		return false, "", fmt.Errorf("ceph pg stat: %w", err)
	}
	ok, how := st.clean(pgNum)
	return ok, how, nil
}

// createPool makes the benchmark pool: pgNum placement groups, size the
// replicas option (osd_pool_default_size), autoscaling off.
func (c *cluster) createPool(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	if _, err := c.ceph(ctx, "osd", "pool", "create", Pool, itoa(pgNum), itoa(pgNum), "replicated"); err != nil {
		return fmt.Errorf("create pool %s: %w", Pool, err)
	}
	return nil
}

// waitClean waits until the pool's placement groups are all
// active+clean, failing at once when a daemon dies (check).
func (c *cluster) waitClean(parent context.Context, check func() error) error {
	ctx, cancel := context.WithTimeout(parent, startTimeout)
	defer cancel()
	last := "no answer yet"
	for {
		if err := check(); err != nil {
			return err
		}
		ok, how, err := c.poolReady(ctx)
		switch {
		case ok:
			return nil
		case err != nil:
			last = err.Error()
		default:
			last = how
		}
		select {
		case <-ctx.Done():
			if err := check(); err != nil {
				return err
			}
			if err := parent.Err(); err != nil {
				return fmt.Errorf("pool %s not active+clean (%s): %w", Pool, last, err)
			}
			return fmt.Errorf("pool %s not active+clean within %s: %s", Pool, startTimeout, last)
		case <-time.After(pollEvery):
		}
	}
}

// stopAll stops daemons at once (SIGTERM, killed after stopGrace) and
// joins what went wrong in stopping them (a kill, an exit with an error),
// not a death before, which Check and Close report.
func stopAll(procs ...*server.Process) error {
	errs := make([]error, len(procs))
	var wg sync.WaitGroup
	for i, p := range procs {
		if p == nil {
			continue
		}
		wg.Go(func() {
			alive := p.Died() == nil
			if err := p.Stop(stopGrace); err != nil {
				errs[i] = p.WithLog(err)
				return
			}
			if exited, werr := p.Exited(); alive && exited && werr != nil && !termed(werr) {
				errs[i] = p.WithLog(fmt.Errorf("stopped with %v", werr))
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// termed reports whether a daemon's exit was the SIGTERM it was stopped
// with, which it had no handler for yet (stopped while it started).
func termed(err error) bool {
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return false
	}
	ws, ok := exit.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM
}

// newUUID returns a random (version 4) UUID: an OSD's or the cluster's.
func newUUID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make a uuid: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:]), nil
}
