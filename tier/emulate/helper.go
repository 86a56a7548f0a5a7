package emulate

import (
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/host/mountinfo"
	"github.com/tierbench/tierbench/host/proc"
)

// helperArg, as the first argument, together with helperEnv=1 in the
// environment, makes this executable a latency server (see init). Both
// are needed, so neither a user typing the argument nor an inherited
// variable can turn a tierbench into a FUSE server by accident.
const (
	helperArg = "__serve-latency"
	helperEnv = "TIERBENCH_LATENCY_HELPER"
)

// Timeouts of the owner's side.
const (
	// readyWait bounds how long Start waits for the helper to mount and
	// calibrate (calibration measures at most about a second).
	readyWait = 2 * time.Minute
	// closeWait bounds how long Close waits for the helper after asking it
	// to unmount; a mount still in use is detached lazily and served
	// until its files are closed. Generous: on a busy 2-core host the
	// helper may take seconds to be scheduled, unmount and exit.
	closeWait = 30 * time.Second
)

// init serves an emulated tier instead of running the program when this
// executable was started by Start. It is here, rather than behind a
// subcommand of tierbench, so that every binary that can call Start (the
// tierbench command, and the test binary of any package whose tests
// provision emulated tiers) can also be its helper: a test binary started
// as a helper must never run its tests instead.
func init() {
	if len(os.Args) > 1 && os.Args[1] == helperArg && os.Getenv(helperEnv) == "1" {
		os.Exit(helperMain(os.Args[2:]))
	}
}

// Options tunes Start. The zero value is usable.
type Options struct {
	// Started is called with the helper's pid as soon as it runs, before
	// it mounts, so the caller can record it (tierbench's ledger does, so
	// that `tierbench cleanup` can kill a helper its owner left). An error
	// stops the helper and fails Start.
	Started func(pid int) error
	// Stderr receives what the helper itself prints (only a crash: go-fuse's
	// log is discarded). Nil means this process's stderr. A file, not a
	// pipe, so that the helper never dies of a closed pipe when this
	// process is gone.
	Stderr *os.File
	// Crashable makes the mount keep what it needs to undo every change
	// not yet durable, for PowerCut (see "Crashable mounts" in the
	// package doc). Reads and writes then always go through the server
	// (no FUSE passthrough), whatever the latencies.
	Crashable bool
	// AtomicWrite is the emulated device's atomic-write unit in bytes,
	// which a torn power cut (ModelTorn) keeps or loses whole: a power
	// of two, 0 for DefaultAtomicWrite.
	AtomicWrite int64
	// VolatileCache makes a crashable mount keep writes through O_DIRECT
	// handles unsynced until an fsync of their file, as a device with a
	// volatile write cache does (Linux promises O_DIRECT no more); without
	// it they are durable when they return, as on a device without one
	// (or with power-loss protection).
	VolatileCache bool
	// LogWrites makes a crashable mount log the bytes of every write not
	// yet durable, until its file's next fsync, so that it can be cut
	// under ModelReorder; WriteLogCap bounds the bytes logged at once
	// over the mount (0: DefaultWriteLogCap). Other models need no log,
	// and a mount without it costs nothing of the kind.
	LogWrites   bool
	WriteLogCap int64
	// Calibrated, when set, is another mount's calibration of the same
	// latencies (and crashability), whose overhead and round trip this
	// mount takes instead of measuring its own: so that two tiers of one
	// spec in a study delay alike (see Calibration.Shared).
	Calibrated *Calibration
}

// Server is an emulated tier served by a helper process.
type Server struct {
	mountPoint  string
	mount       mountinfo.Mount // as mounted, to name what keeps it busy
	cmd         *exec.Cmd
	exited      chan struct{} // closed once the helper is reaped
	calibration Calibration
	ctl         *control // the helper's command channel

	once     sync.Once
	closeErr error
}

// readyMsg is the first message the helper sends its owner, over the pipe
// it gets as file descriptor 3: the calibration once it serves, or why
// it could not. (The helper then replies to commands there; see
// control.go.)
type readyMsg struct {
	Error       string      `json:"error,omitempty"`
	Calibration Calibration `json:"calibration"`
}

// Start mounts a delaying passthrough (loopback) FUSE filesystem of backing
// on mountPoint, served by a helper process, and returns once the mount
// serves and is calibrated (see the package doc for what each latency
// applies to). mountPoint must be an existing empty folder, outside
// backing.
//
// The helper is this executable, re-executed through /proc/self/exe (so a
// binary replaced on disk meanwhile does not matter), in its own process
// group so a Ctrl-C at the terminal does not stop it before the engine
// using the mount has closed. It unmounts and exits when Close asks, and
// also when this process dies: if this process is killed, the helper
// answers the dead process's last requests, unmounts (lazily while files
// are still open) and exits once nothing uses the mount.
//
// As root the mount is made directly with mount(2), so fusermount is not
// needed; otherwise go-fuse falls back to fusermount3.
func Start(backing, mountPoint string, lat Latency, opt Options) (*Server, error) {
	if lat.Read < 0 || lat.Write < 0 || lat.Fsync < 0 {
		return nil, fmt.Errorf("emulate: negative latency %+v", lat)
	}
	backing, mountPoint, err := checkFolders(backing, mountPoint)
	if err != nil {
		return nil, fmt.Errorf("emulate: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("emulate: readiness pipe: %w", err)
	}
	cr, cmds, err := os.Pipe()
	if err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("emulate: command pipe: %w", err)
	}
	files := []*os.File{w, cr}
	cmd := helperCommand(backing, mountPoint, lat, opt, files)
	err = cmd.Start()
	for _, f := range files {
		f.Close()
	}
	if err != nil {
		r.Close()
		cmds.Close()
		return nil, fmt.Errorf("emulate: start the latency server for %s: %w", mountPoint, err)
	}
	s := &Server{mountPoint: mountPoint, cmd: cmd, exited: make(chan struct{})}
	dec := json.NewDecoder(r)
	s.ctl = &control{cmds: cmds, replies: r, dec: dec}
	go func() {
		cmd.Wait()
		close(s.exited)
	}()
	if opt.Started != nil {
		if err := opt.Started(cmd.Process.Pid); err != nil {
			s.kill()
			return nil, err
		}
	}
	msg, err := s.awaitReady(dec)
	if err == nil && msg.Error != "" {
		err = errors.New(msg.Error)
	}
	if err != nil {
		s.kill()
		return nil, fmt.Errorf("emulate: serve %s on %s: %w", backing, mountPoint, err)
	}
	s.calibration = msg.Calibration
	s.mount, _ = mountinfo.At(mountPoint)
	return s, nil
}

// helperCommand is the re-execution of this executable as the latency
// server; files become its file descriptors 3 (the readiness pipe, then
// the replies) and 4 (the command pipe).
func helperCommand(backing, mountPoint string, lat Latency, opt Options, files []*os.File) *exec.Cmd {
	stderr := opt.Stderr
	if stderr == nil {
		stderr = os.Stderr
	}
	args := []string{os.Args[0], helperArg,
		"-owner", strconv.Itoa(os.Getpid()), "-latency", lat.Encode()}
	if opt.Crashable {
		args = append(args, "-crashable")
	}
	if opt.VolatileCache {
		args = append(args, "-volatile-cache")
	}
	if opt.AtomicWrite > 0 {
		args = append(args, "-atomic-write", strconv.FormatInt(opt.AtomicWrite, 10))
	}
	if opt.LogWrites {
		args = append(args, "-log-writes", strconv.FormatInt(cmp.Or(opt.WriteLogCap, DefaultWriteLogCap), 10))
	}
	if opt.Calibrated != nil {
		args = append(args, "-calibrated", opt.Calibrated.Overhead.String(), "-calibrated-round-trip", opt.Calibrated.RoundTrip.String())
	}
	cmd := &exec.Cmd{
		Path:       "/proc/self/exe",
		Args:       append(args, backing, mountPoint),
		Env:        append(os.Environ(), helperEnv+"=1"),
		Stderr:     stderr,
		ExtraFiles: files,
	}
	// Its own group, not killed with tierbench: the helper watches its
	// owner and unmounts when it dies.
	proc.OwnGroupOutliving(cmd)
	return cmd
}

// awaitReady reads the helper's readiness message.
func (s *Server) awaitReady(dec *json.Decoder) (readyMsg, error) {
	got := make(chan readyMsg, 1)
	failed := make(chan error, 1)
	go func() {
		var m readyMsg
		if err := dec.Decode(&m); err != nil {
			failed <- err
			return
		}
		got <- m
	}()
	select {
	case m := <-got:
		return m, nil
	case err := <-failed:
		<-s.exited
		return readyMsg{}, fmt.Errorf("the latency server exited before it served (%s; reading its message: %v)", s.cmd.ProcessState, err)
	case <-time.After(readyWait):
		return readyMsg{}, fmt.Errorf("the latency server did not serve within %v", readyWait)
	}
}

// kill stops the helper at once (its process group) and reaps it; the
// kernel then aborts the FUSE connection, and a mount it made is left dead
// until unmounted.
func (s *Server) kill() {
	_ = proc.KillGroup(s.cmd.Process.Pid)
	<-s.exited
	_ = unix.Unmount(s.mountPoint, unix.MNT_DETACH)
	if s.ctl != nil {
		s.ctl.close()
	}
}

// PID is the helper process's pid.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// MountPoint is where the emulated tier is mounted.
func (s *Server) MountPoint() string { return s.mountPoint }

// Calibration is what the helper measured of the layer when it mounted.
func (s *Server) Calibration() Calibration { return s.calibration }

// Close unmounts and waits for the helper to exit. A mount still in use
// (a process has a file open in it) is detached lazily so nothing stays
// mounted; the helper then keeps serving those open files until they are
// closed, and Close waits for that at most a few seconds before it reports
// the mount as detached but busy (the helper exits by itself later).
func (s *Server) Close() error {
	s.once.Do(func() { s.closeErr = s.close() })
	return s.closeErr
}

func (s *Server) close() error {
	if s.ctl != nil {
		// Once the helper is gone, so that a command under way gets its
		// reply or sees the helper exit.
		defer s.ctl.close()
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("emulate: stop the latency server of %s: %w", s.mountPoint, err)
	}
	select {
	case <-s.exited:
	case <-time.After(closeWait):
		if mounted(s.mountPoint) {
			return fmt.Errorf("emulate: %s did not unmount: its latency server (pid %d) did not exit within %v", s.mountPoint, s.PID(), closeWait)
		}
		return s.busy()
	}
	if mounted(s.mountPoint) {
		return fmt.Errorf("emulate: %s is still mounted after its latency server exited (%s)", s.mountPoint, s.cmd.ProcessState)
	}
	return nil
}

// busy explains a helper that outlived closeWait after its mount was
// detached lazily: it names the processes still holding files there, which
// a user must stop. If none does, no process here will use the mount
// again, yet the kernel kept its FUSE connection open: the stacks of a
// helper so caught (in CI, with the Kubernetes tests running beside)
// showed it idle, waiting on the FUSE device for requests. A copy of the
// mount in another mount namespace (a container started while it was
// mounted) holds its filesystem so without holding a file. The helper is
// then ended, which closes its FUSE device and so ends the connection
// (such copies answer ENOTCONN), and the mount is gone: Close succeeds.
func (s *Server) busy() error {
	if s.mount.ID == 0 { // not found in the mount table at Start
		return fmt.Errorf("emulate: %s was busy: detached lazily; its latency server (pid %d) keeps serving the files still open in it until they are closed", s.mountPoint, s.PID())
	}
	holders := mountinfo.Holders(s.mount)
	if len(holders) == 0 {
		// The last holder may have let go just now.
		select {
		case <-s.exited:
			return nil
		case <-time.After(2 * time.Second):
		}
		s.kill()
		return nil
	}
	const shown = 5
	names := make([]string, 0, shown)
	for i, h := range holders {
		if i == shown {
			names = append(names, fmt.Sprintf("and %d more", len(holders)-shown))
			break
		}
		names = append(names, h.String())
	}
	return fmt.Errorf("emulate: %s was busy (%s): detached lazily; its latency server (pid %d) keeps serving the files still open in it until they are closed", s.mountPoint, strings.Join(names, "; "), s.PID())
}

// mounted reports whether dir is a mount point, from the mount table.
func mounted(dir string) bool {
	_, ok := mountinfo.At(dir)
	return ok
}

// helperConfig is what the helper's command line says.
type helperConfig struct {
	owner         int
	lat           Latency
	crashable     bool
	atomicWrite   int64
	volatileCache bool
	// logWrites is the write log's cap in bytes, 0 for no log.
	logWrites           int64
	backing, mountPoint string
	// calibrated is the overhead and round trip to take (nil: measure).
	calibrated *Calibration
}

func parseHelperArgs(args []string) (helperConfig, error) {
	var c helperConfig
	fl := flag.NewFlagSet(helperArg, flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	fl.IntVar(&c.owner, "owner", 0, "pid of the process the mount serves")
	fl.Func("latency", "the latency to apply, as Latency.Encode writes it", func(v string) (err error) {
		c.lat, err = DecodeLatency(v)
		return err
	})
	fl.BoolVar(&c.crashable, "crashable", false, "keep what a power cut undoes, for the power commands on fd 4")
	fl.Int64Var(&c.atomicWrite, "atomic-write", DefaultAtomicWrite, "the atomic-write unit in bytes, which a torn power cut keeps or loses whole")
	fl.BoolVar(&c.volatileCache, "volatile-cache", false, "keep O_DIRECT writes unsynced until an fsync")
	fl.Int64Var(&c.logWrites, "log-writes", 0, "log unsynced writes, up to this many bytes, for reorder cuts")
	var overhead, roundTrip time.Duration
	fl.DurationVar(&overhead, "calibrated", -1, "the layer's overhead, measured by another mount of this spec")
	fl.DurationVar(&roundTrip, "calibrated-round-trip", 0, "the layer's round trip, measured with -calibrated")
	if err := fl.Parse(args); err != nil {
		return c, err
	}
	if overhead >= 0 {
		c.calibrated = &Calibration{Overhead: overhead, RoundTrip: roundTrip}
	}
	if c.atomicWrite <= 0 || c.atomicWrite&(c.atomicWrite-1) != 0 {
		return c, fmt.Errorf("-atomic-write %d: want a power of two of bytes", c.atomicWrite)
	}
	if c.logWrites < 0 {
		return c, fmt.Errorf("-log-writes %d: want a cap of bytes above 0", c.logWrites)
	}
	if fl.NArg() != 2 || c.owner <= 0 {
		return c, fmt.Errorf("usage: %s -owner PID [-latency JSON] [-crashable] BACKING MOUNTPOINT", helperArg)
	}
	c.backing, c.mountPoint = fl.Arg(0), fl.Arg(1)
	return c, nil
}

// helperMain is the latency server process: mount, calibrate, say ready,
// serve until unmounted; unmount when told to (SIGTERM) or when the owner
// is gone. Its exit code is for the owner's error message only.
func helperMain(args []string) int {
	os.Unsetenv(helperEnv)
	// go-fuse also logs a few things through the standard logger.
	log.SetOutput(io.Discard)
	ready := os.NewFile(3, "ready")
	fail := func(err error) int {
		tell(ready, readyMsg{Error: err.Error()})
		return 1
	}
	cfg, err := parseHelperArgs(args)
	if err != nil {
		return fail(err)
	}
	// The terminal's Ctrl-C is for the owner, which unmounts through Close.
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP)
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	ownerGone, err := watchOwner(cfg.owner)
	if err != nil {
		return fail(err)
	}
	srv, err := serve(cfg.backing, cfg.mountPoint, cfg.lat, cfg.crashable)
	if err != nil {
		return fail(err)
	}
	if srv.crash != nil {
		srv.crash.atomicWrite, srv.crash.volatileCache = cfg.atomicWrite, cfg.volatileCache
		if cfg.logWrites > 0 {
			srv.crash.writeLog = &writeLog{cap: cfg.logWrites}
		}
		defer srv.crash.close()
	}
	go func() {
		select {
		case <-term:
		case <-ownerGone:
		}
		_ = srv.unmount()
	}()
	cal, err := srv.calibrate(cfg.lat, cfg.calibrated)
	if err != nil {
		err = fmt.Errorf("calibrate: %w", err)
	} else if srv.crash != nil {
		// What the backing folder held, and what the calibration did,
		// is durable: the mount starts from there.
		if err = srv.crash.settle(); err != nil {
			err = fmt.Errorf("start tracking changes: %w", err)
		}
	}
	if err != nil {
		_ = srv.unmount()
		srv.server.Wait()
		return fail(err)
	}
	_ = json.NewEncoder(ready).Encode(readyMsg{Calibration: cal})
	go serveCommands(os.NewFile(4, "commands"), ready, srv)
	srv.server.Wait()
	return 0
}

// tell sends the owner its one message and closes the pipe. An owner that
// is gone cannot read it; the helper then serves until it sees that.
func tell(w *os.File, m readyMsg) {
	_ = json.NewEncoder(w).Encode(m)
	w.Close()
}

// watchOwner returns a channel closed once process pid, the helper's
// parent, has exited. It watches a pidfd, which the kernel makes readable
// when the whole process is gone, not just one of its threads (unlike
// PR_SET_PDEATHSIG, which fires when the thread that started the helper
// exits, and Go may end threads while the process lives on).
func watchOwner(pid int) (<-chan struct{}, error) {
	gone := make(chan struct{})
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) || os.Getppid() != pid {
		close(gone) // already gone (and this helper reparented)
		if err == nil {
			unix.Close(fd)
		}
		return gone, nil
	}
	if err != nil {
		// No pidfd (Linux before 5.3): notice the reparenting instead.
		go func() {
			for os.Getppid() == pid {
				time.Sleep(time.Second)
			}
			close(gone)
		}()
		return gone, nil
	}
	go func() {
		defer unix.Close(fd)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(fds, -1)
			if n > 0 || (err != nil && err != unix.EINTR) {
				break
			}
		}
		close(gone)
	}()
	return gone, nil
}
