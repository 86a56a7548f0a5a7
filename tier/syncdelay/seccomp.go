package syncdelay

// This file applies rules to programs tierbench starts: the helper that
// installs the seccomp filter and becomes the program, and the supervisor
// that answers the filter's notifications (see the package doc).

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/tier/emulate"
)

const (
	helperArg = "__sync-delay"
	helperEnv = "TIERBENCH_SYNC_DELAY_HELPER"
	// calibrationCalls undelayed syncs the helper makes under its filter
	// before it becomes the program: their median is the supervisor's
	// round trip. Then, for each rule's median (calibrationTargets),
	// calibrationRounds times, calibrationWaits syncs that the supervisor
	// answers as a rule of that median would (with no sync to make): what
	// their median misses the target by corrects the supervisor's cost
	// around a wait (the round trip, the pause's overshoot, the caller's
	// wake-up), which the rule's waits are shortened by; so the FUSE
	// layer calibrates itself at mount, at the asked latency. At each
	// rule's own median, because that cost depends on the wait: on a VM
	// an idle vCPU first polls, then halts, so a 1 ms wait overshoots
	// some 20 µs more than a 100 µs one, and a 125 µs rule calibrated at
	// 1 ms came out 15% short.
	calibrationCalls  = 40
	calibrationWaits  = 40
	calibrationRounds = 4
	// handoverWait bounds the helper's start, up to its handing over the
	// filter's descriptor and calibration.
	handoverWait = 10 * time.Second
)

// init installs the filter and becomes the program when this executable
// was started as the helper (Command).
func init() {
	if len(os.Args) > 4 && os.Args[1] == helperArg && os.Getenv(helperEnv) == "1" {
		os.Exit(helperMain(os.Args[2:]))
	}
}

// trapped are the system calls the filter hands to the supervisor.
var trapped = []uint32{unix.SYS_FSYNC, unix.SYS_FDATASYNC, unix.SYS_SYNC_FILE_RANGE, unix.SYS_SYNCFS}

// auditArch is this architecture's AUDIT_ARCH value, which the filter
// checks before it reads a system call number.
var auditArch = map[string]uint32{"amd64": 0xc000003e, "arm64": 0xc00000b7}[runtime.GOARCH]

// filter is the BPF program: the trapped calls of this architecture go to
// the supervisor, everything else runs.
func filter() []unix.SockFilter {
	const (
		ldAbs = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret   = unix.BPF_RET | unix.BPF_K
	)
	n := uint8(len(trapped))
	prog := []unix.SockFilter{
		{Code: ldAbs, K: 4},                         // seccomp_data.arch
		{Code: jeq, Jt: 0, Jf: n + 1, K: auditArch}, // another ABI: allow
		{Code: ldAbs, K: 0},                         // seccomp_data.nr
	}
	for i, nr := range trapped {
		prog = append(prog, unix.SockFilter{Code: jeq, Jt: n - uint8(i), K: nr})
	}
	return append(prog,
		unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ALLOW},
		unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_USER_NOTIF})
}

// Supported says why the rules cannot be applied to programs here, or nil.
func Supported() error {
	if auditArch == 0 {
		return fmt.Errorf("delaying syncs at the system call is built for amd64 and arm64, not %s", runtime.GOARCH)
	}
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return err
	}
	var major, minor int
	fmt.Sscanf(unix.ByteSliceToString(u.Release[:]), "%d.%d", &major, &minor)
	if major < 5 || major == 5 && minor < 9 {
		return fmt.Errorf("delaying syncs at the system call needs Linux 5.9 or later (seccomp notifications that continue, pidfd_getfd); this kernel is %d.%d: use the FUSE layer (emulate: fuse)", major, minor)
	}
	return nil
}

// Command is the helper's side of a command wrapped by Wrap, until the
// command started (Started) or did not (Abandon).
type Command struct {
	rules  Rules
	mine   *os.File
	theirs *os.File
}

// Wrap makes cmd, not yet started, run its program under rules: cmd then
// runs the helper (this executable, re-executed), which becomes the
// program. uid and gid, unless -1, are the user the program runs as: the
// helper starts as tierbench's user (it installs the filter and must read
// this executable) and becomes that user just before it becomes the
// program. cmd must give no ExtraFiles (the helper's control socket is
// fd 3) and no SysProcAttr.Credential.
func Wrap(cmd *exec.Cmd, rules Rules, uid, gid int) (*Command, error) {
	if len(cmd.ExtraFiles) > 0 || cmd.SysProcAttr != nil && cmd.SysProcAttr.Credential != nil {
		return nil, errors.New("delay syncs: the command has extra files or a user of its own; pass the user to Wrap")
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("delay syncs: control socket: %w", err)
	}
	// Non-blocking, so that the supervisor's end takes a read deadline.
	if err := unix.SetNonblock(fds[0], true); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, fmt.Errorf("delay syncs: control socket: %w", err)
	}
	c := &Command{rules: rules, mine: os.NewFile(uintptr(fds[0]), "sync-delay-supervisor"),
		theirs: os.NewFile(uintptr(fds[1]), "sync-delay-helper")}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	// /proc/self/exe: this very executable, even if its file was replaced
	// since it started.
	cmd.Args = append([]string{os.Args[0], helperArg, strconv.Itoa(uid), strconv.Itoa(gid), cmd.Path}, cmd.Args[1:]...)
	cmd.Path, cmd.Env, cmd.ExtraFiles = "/proc/self/exe", append(cmd.Env, helperEnv+"=1"), []*os.File{c.theirs}
	return c, nil
}

// Run runs cmd (as Wrap takes it) under rules, as its own user, to its end.
func Run(cmd *exec.Cmd, rules Rules) error {
	c, err := Wrap(cmd, rules, -1, -1)
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		c.Abandon()
		return err
	}
	s, err := c.Started(cmd.Process.Pid)
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return err
	}
	defer s.Close()
	return cmd.Wait()
}

// Abandon closes what Wrap opened, for a command that did not start.
func (c *Command) Abandon() {
	c.mine.Close()
	c.theirs.Close()
}

// Started takes over the filter of the helper that just started (its pid)
// and serves it until Close or until every process under it is gone. An
// error means the program must be stopped: its syncs are not delayed.
func (c *Command) Started(pid int) (*Supervisor, error) {
	defer c.mine.Close()
	c.theirs.Close()
	s, err := c.handover()
	if err != nil {
		return nil, fmt.Errorf("delay syncs of pid %d: %w", pid, err)
	}
	return s, nil
}

// handover receives the filter's descriptor, then serves it while the
// helper calibrates, and reads the round trip it measured.
func (c *Command) handover() (*Supervisor, error) {
	// Without a deadline a stuck helper would hold the start for ever.
	if err := c.mine.SetReadDeadline(time.Now().Add(handoverWait)); err != nil {
		return nil, err
	}
	raw, err := c.mine.SyscallConn()
	if err != nil {
		return nil, err
	}
	buf, oob := make([]byte, 512), make([]byte, unix.CmsgSpace(4))
	var n, oobn int
	var rerr error
	err = raw.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = unix.Recvmsg(int(fd), buf, oob, 0)
		return !errors.Is(rerr, unix.EAGAIN)
	})
	switch {
	case err != nil:
		return nil, fmt.Errorf("helper did not hand over its filter: %w", err)
	case rerr != nil:
		return nil, fmt.Errorf("helper did not hand over its filter: %w", rerr)
	case n == 0:
		return nil, errors.New("helper exited before it handed over its filter")
	case oobn == 0:
		return nil, fmt.Errorf("helper: %s", buf[:n])
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, fmt.Errorf("helper's filter descriptor: %v", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return nil, fmt.Errorf("helper's filter descriptor: %v", err)
	}
	s := newSupervisor(fds[0], c.rules)
	go s.serve()
	if err := c.calibrate(s); err != nil {
		s.Close()
		return nil, fmt.Errorf("helper's calibration: %w", err)
	}
	return s, nil
}

// calibrate takes the helper's measurements (see calibrationCalls) and
// sets s's timers. Each reply tells the helper to measure again (1) or
// to become the program (0): only then, so that its first sync is
// delayed.
func (c *Command) calibrate(s *Supervisor) error {
	measured := func() (time.Duration, error) {
		var b [8]byte
		if n, err := c.mine.Read(b[:]); n != len(b) {
			return 0, fmt.Errorf("no measurement (%v)", err)
		}
		return time.Duration(binary.LittleEndian.Uint64(b[:])), nil
	}
	reply := func(more byte) error {
		_, err := c.mine.Write([]byte{more})
		return err
	}
	rt, err := measured()
	if err != nil {
		return err
	}
	overheads := map[time.Duration]time.Duration{}
	for _, target := range s.rules.calibrationTargets() {
		overhead, settled := rt, time.Duration(0)
		for round := range calibrationRounds {
			s.cal.Store(emulate.NewSyncTimer(emulate.Latency{Fsync: target}, overhead, rt))
			if err := reply(1); err != nil {
				return err
			}
			waited, err := measured()
			if err != nil {
				return err
			}
			overhead = min(max(overhead+waited-target, 0), target)
			if round >= calibrationRounds/2 {
				settled += overhead
			}
		}
		// The later rounds' mean: the first ones converge (a shorter wait
		// overshoots less), the rest estimate.
		overheads[target] = settled / time.Duration(calibrationRounds-calibrationRounds/2)
	}
	s.mu.Lock()
	s.timers = s.rules.timers(func(r Rule) time.Duration { return overheads[calibrationTarget(r)] }, rt)
	s.mu.Unlock()
	return reply(0)
}

// helperMain installs the filter on this thread, hands its descriptor to
// the supervisor (fd 3), makes the calibration's syncs under it and
// reports their medians until the supervisor has what it needs, then
// becomes args[2:] as user args[0]:args[1].
// The filter holds on this thread only, which is the one that execs: the
// program and all it forks inherit it.
func helperMain(args []string) int {
	runtime.LockOSThread()
	ctl := 3
	fail := func(format string, a ...any) int {
		msg := fmt.Sprintf(format, a...)
		unix.Write(ctl, []byte(msg))
		fmt.Fprintln(os.Stderr, "tierbench sync-delay helper: "+msg)
		return 1
	}
	uid, err1 := strconv.Atoi(args[0])
	gid, err2 := strconv.Atoi(args[1])
	if err := errors.Join(err1, err2); err != nil {
		return fail("bad user: %v", err)
	}
	listener, err := install()
	if err != nil {
		return fail("install the seccomp filter: %v", err)
	}
	if err := unix.Sendmsg(ctl, []byte{0}, unix.UnixRights(listener), nil, 0); err != nil {
		return fail("hand over the filter: %v", err)
	}
	unix.Close(listener)
	for calls := calibrationCalls; ; calls = calibrationWaits {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(timeSyncs(ctl, calls)))
		if _, err := unix.Write(ctl, b[:]); err != nil {
			return fail("report calibration: %v", err)
		}
		var more [1]byte
		if n, err := unix.Read(ctl, more[:]); n != 1 {
			fmt.Fprintf(os.Stderr, "tierbench sync-delay helper: no go-ahead from the supervisor (%v)\n", err)
			return 1
		}
		if more[0] == 0 {
			break
		}
	}
	unix.Close(ctl)
	if uid >= 0 {
		if err := becomeUser(uid, gid); err != nil {
			fmt.Fprintf(os.Stderr, "tierbench sync-delay helper: become user %d: %v\n", uid, err)
			return 1
		}
	}
	env := os.Environ()
	for i, e := range env {
		if e == helperEnv+"=1" {
			env = append(env[:i], env[i+1:]...)
			break
		}
	}
	err = unix.Exec(args[2], append([]string{args[2]}, args[3:]...), env)
	fmt.Fprintf(os.Stderr, "tierbench sync-delay helper: exec %s: %v\n", args[2], err)
	return 127
}

// install installs the filter on the calling thread, with a listener.
// no_new_privs lets a user without CAP_SYS_ADMIN install it; the programs
// tierbench starts gain no privileges by exec anyway.
func install() (int, error) {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return -1, fmt.Errorf("no_new_privs: %w", err)
	}
	prog := filter()
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	fd, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&fprog)))
	if errno != 0 {
		return -1, errno
	}
	// Wake the supervisor on the caller's CPU and back (Linux 6.6): a
	// cheaper round trip; older kernels do without.
	const syncWakeUp = 1 // SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
	unix.Syscall(unix.SYS_IOCTL, fd, unix.SECCOMP_IOCTL_NOTIF_SET_FLAGS, syncWakeUp)
	return int(fd), nil
}

// timeSyncs is the median time of n syncs under the filter, of the
// control socket (the kernel refuses them at once; the supervisor's
// answer is what takes time).
func timeSyncs(fd, n int) time.Duration {
	ds := make([]time.Duration, n)
	for i := range ds {
		start := time.Now()
		unix.Fdatasync(fd)
		ds[i] = time.Since(start)
	}
	return median(ds)
}

// becomeUser drops to uid:gid on this thread, the one that execs (the
// exec's credentials are its), and asks again to be killed with its
// parent: a change of credentials clears that.
func becomeUser(uid, gid int) error {
	if _, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, 0, 0, 0); e != 0 {
		return fmt.Errorf("setgroups: %w", e)
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESGID, uintptr(gid), uintptr(gid), uintptr(gid)); e != 0 {
		return fmt.Errorf("setresgid: %w", e)
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, uintptr(uid), uintptr(uid), uintptr(uid)); e != 0 {
		return fmt.Errorf("setresuid: %w", e)
	}
	return unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0)
}

// notif is struct seccomp_notif, with its seccomp_data inline.
type notif struct {
	ID    uint64
	PID   uint32
	Flags uint32
	Nr    int32
	Arch  uint32
	IP    uint64
	Args  [6]uint64
}

// notifResp is struct seccomp_notif_resp.
type notifResp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

// Supervisor answers one filter's notifications.
type Supervisor struct {
	fd     int
	rules  Rules
	mu     sync.Mutex
	timers []*emulate.SyncTimer // nil until calibrated (the helper's calls)
	// cal answers the helper's calibration calls (nil: at once).
	cal    atomic.Pointer[emulate.SyncTimer]
	closed sync.Once
	done   chan struct{}
}

func newSupervisor(fd int, rules Rules) *Supervisor {
	return &Supervisor{fd: fd, rules: rules.cleaned(), done: make(chan struct{})}
}

// Close stops serving. Call it once the program exited: a call still
// trapped then fails with ENOSYS.
func (s *Supervisor) Close() {
	s.closed.Do(func() {
		close(s.done)
		unix.Close(s.fd)
	})
}

// serve receives notifications until the filter has no process left or
// Close, and answers each (answer): the sync it makes on a caller's behalf
// runs in this loop, which is quick on the RAM folders profiles are
// emulated on, and holds the other callers for as long on a disk.
func (s *Supervisor) serve() {
	pfd := []unix.PollFd{{Fd: int32(s.fd), Events: unix.POLLIN}}
	for {
		select {
		case <-s.done:
			return
		default:
		}
		// A timeout, so that Close is noticed even while nothing comes.
		if _, err := unix.Poll(pfd, 200); err != nil && !errors.Is(err, unix.EINTR) {
			return
		}
		if pfd[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0 {
			return // every process under the filter is gone
		}
		if pfd[0].Revents&unix.POLLIN == 0 {
			continue
		}
		var n notif
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(s.fd), unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&n))); e != 0 {
			continue // the caller died meanwhile (ENOENT), or a signal
		}
		s.answer(n, time.Now())
	}
}

// answer makes a trapped call that names a file under a rule itself, on a
// copy of the caller's descriptor, waits the rest of the draw and returns
// the call's result; any other call continues as the caller made it. It
// runs in the receiving loop, which saves a thread's wake-up on every
// call (a quarter of the round trip here); only a wait long enough to
// sleep is handed to a goroutine, so that the loop goes on receiving.
func (s *Supervisor) answer(n notif, received time.Time) {
	resp := notifResp{ID: n.ID, Flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
	s.mu.Lock()
	timers := s.timers
	s.mu.Unlock()
	// The rule is looked up even before calibration, so that the helper's
	// calibration calls pay for the lookup as the program's calls do.
	i := s.ruleOf(n)
	switch {
	case timers == nil:
		if cal := s.cal.Load(); cal != nil {
			s.finish(resp, cal, cal.Draw(), received, func() {})
			return
		}
	case i >= 0:
		target, end := timers[i].Begin()
		if s.pending() {
			// Another call waits to be received: this one's sync must
			// not hold it up, as a device runs concurrent syncs at once.
			go func() {
				resp := s.delegated(n)
				timers[i].Finish(target, time.Since(received))
				s.send(resp)
				end()
			}()
			return
		}
		s.finish(s.delegated(n), timers[i], target, received, end)
		return
	}
	s.send(resp)
}

// pending reports whether another notification is ready to be received.
func (s *Supervisor) pending() bool {
	pfd := []unix.PollFd{{Fd: int32(s.fd), Events: unix.POLLIN}}
	n, err := unix.Poll(pfd, 0)
	return err == nil && n > 0 && pfd[0].Revents&unix.POLLIN != 0
}

// finish answers with resp once target has passed since received, then
// calls end: in the receiving loop when the rest is short (a spin, or
// nothing), else from a goroutine that sleeps it.
func (s *Supervisor) finish(resp notifResp, t *emulate.SyncTimer, target time.Duration, received time.Time, end func()) {
	if t.Sleeps(target, time.Since(received)) {
		go func() {
			t.Finish(target, time.Since(received))
			s.send(resp)
			end()
		}()
		return
	}
	t.Finish(target, time.Since(received))
	s.send(resp)
	end()
}

// send answers a notification.
func (s *Supervisor) send(resp notifResp) {
	unix.Syscall(unix.SYS_IOCTL, uintptr(s.fd), unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&resp)))
}

// delegated makes the call n names on the caller's behalf, on a copy of
// its descriptor, and returns the answer that carries its result. Where
// the descriptor cannot be copied (its thread is gone, or the kernel
// refuses), the caller makes the call itself once answered.
func (s *Supervisor) delegated(n notif) notifResp {
	resp := notifResp{ID: n.ID}
	fd, err := s.copyFD(n)
	if err != nil {
		resp.Flags = unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE
		return resp
	}
	defer unix.Close(fd)
	var errno unix.Errno
	switch err := call(n, fd); {
	case errors.As(err, &errno):
		resp.Error = -int32(errno)
	case err != nil:
		resp.Error = -int32(unix.EIO)
	}
	return resp
}

// ruleOf is the rule whose folder holds the file the call names, or -1.
func (s *Supervisor) ruleOf(n notif) int {
	path, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", n.PID, int32(n.Args[0])))
	if err != nil {
		return -1
	}
	return s.rules.match(path)
}

// copyFD is a copy of the descriptor the trapped call names, taken while
// the call is still trapped (so the descriptor is still the one it named).
func (s *Supervisor) copyFD(n notif) (int, error) {
	pidfd, err := threadPidfd(int(n.PID))
	if err != nil {
		return -1, err
	}
	defer unix.Close(pidfd)
	fd, err := unix.PidfdGetfd(pidfd, int(int32(n.Args[0])), 0)
	if err != nil {
		return -1, err
	}
	id := n.ID
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(s.fd), unix.SECCOMP_IOCTL_NOTIF_ID_VALID, uintptr(unsafe.Pointer(&id))); e != 0 {
		unix.Close(fd)
		return -1, e
	}
	return fd, nil
}

// pidfdThread is PIDFD_THREAD (Linux 6.9): a pidfd of a thread that is
// not its process's leader.
const pidfdThread = unix.O_EXCL

// threadPidfd is a pidfd for thread tid (a notification names the calling
// thread, and a database's syncs come from many): of the thread itself
// where the kernel allows it, else of its process, whose descriptors its
// threads share.
func threadPidfd(tid int) (int, error) {
	fd, err := unix.PidfdOpen(tid, pidfdThread)
	if err == nil {
		return fd, nil
	}
	status, rerr := os.ReadFile(fmt.Sprintf("/proc/%d/status", tid))
	if rerr != nil {
		return -1, err
	}
	_, after, _ := strings.Cut(string(status), "\nTgid:")
	tgid, cerr := strconv.Atoi(strings.TrimSpace(strings.SplitN(after, "\n", 2)[0]))
	if cerr != nil {
		return -1, err
	}
	return unix.PidfdOpen(tgid, 0)
}

// call makes the trapped call on fd, with the caller's other arguments.
func call(n notif, fd int) error {
	switch n.Nr {
	case unix.SYS_FSYNC:
		return unix.Fsync(fd)
	case unix.SYS_FDATASYNC:
		return unix.Fdatasync(fd)
	case unix.SYS_SYNC_FILE_RANGE:
		return unix.SyncFileRange(fd, int64(n.Args[1]), int64(n.Args[2]), int(n.Args[3]))
	default:
		return unix.Syncfs(fd)
	}
}

// median of ds, which it sorts.
func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}
