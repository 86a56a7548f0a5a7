package pebble

// This file runs Pebble in a child process, for crash runs: killing an
// in-process engine would kill tierbench. With engine.Config.InChild, Open
// re-executes this executable as the child (as tier/emulate's helper is),
// which opens Pebble exactly as Open does in-process and serves the
// records model over net/rpc. Each session is a socketpair whose far end
// is handed to the child over its control socket (SCM_RIGHTS): no socket
// file, no port, nothing another local user could connect to. The child
// closes Pebble and exits when its control socket ends (the owner closed
// the DB, or died).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/rpc"
	"os"
	"os/exec"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/host/logtail"
	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/tier/syncdelay"
)

const (
	childArg = "__serve-pebble"
	childEnv = "TIERBENCH_PEBBLE_CHILD"
	// childCloseWait bounds a clean close of the child's Pebble.
	childCloseWait = 30 * time.Second
)

// init serves Pebble instead of running the program when this executable
// was started as the child (see the file comment).
func init() {
	if len(os.Args) > 1 && os.Args[1] == childArg && os.Getenv(childEnv) == "1" {
		os.Exit(childMain())
	}
}

// childConfig is what the child opens, sent as one JSON line on its
// control socket; Options are the parent's resolved options, typed, with
// their declarations (setting.Values' JSON), which the child opens with
// as they are: it resolves nothing again.
type childConfig struct {
	Dirs       map[string]string
	Options    engine.Options
	Durability engine.Durability
	SyncDelays syncdelay.Rules
}

// childReady is the child's one reply: empty once Pebble is open.
type childReady struct{ Error string }

// openChild starts the child and opens Pebble in it.
func openChild(ctx context.Context, cfg engine.Config) (engine.DB, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("pebble child: control socket: %w", err)
	}
	mine, theirs := os.NewFile(uintptr(fds[0]), "pebble-control"), os.NewFile(uintptr(fds[1]), "pebble-control-child")
	defer theirs.Close()
	cmd := &exec.Cmd{
		Path:       "/proc/self/exe",
		Args:       []string{os.Args[0], childArg},
		Env:        append(os.Environ(), childEnv+"=1"),
		Stderr:     os.Stderr,
		ExtraFiles: []*os.File{theirs},
	}
	// Its own group, which Crash kills whole; not killed with tierbench,
	// since it closes Pebble itself once its control socket closes.
	proc.OwnGroupOutliving(cmd)
	// The child's stderr goes to a log in the study's scratch folder:
	// Pebble's background errors at a power cut (every file operation
	// fails from that instant) are expected, and errors quote its end.
	var log string
	if cfg.Scratch != "" {
		f, err := os.CreateTemp(cfg.Scratch, "pebble-child-*.log")
		if err != nil {
			mine.Close()
			return nil, fmt.Errorf("pebble child: log: %w", err)
		}
		defer f.Close()
		cmd.Stderr, log = f, f.Name()
	}
	if err := cmd.Start(); err != nil {
		mine.Close()
		return nil, fmt.Errorf("pebble child: start: %w", err)
	}
	d := &childDB{cmd: cmd, exited: make(chan struct{}), untrack: cfg.Tracked(cmd.Process.Pid), log: log}
	go func() {
		d.exitErr = cmd.Wait()
		close(d.exited)
	}()
	if d.ctl, err = net.FileConn(mine); err != nil {
		mine.Close()
		d.kill()
		return nil, fmt.Errorf("pebble child: %w", err)
	}
	mine.Close()
	if err := d.handshake(ctx, childConfig{Dirs: cfg.Dirs, Options: cfg.Options, Durability: cfg.Durability, SyncDelays: cfg.SyncDelays}); err != nil {
		d.kill()
		return nil, d.withLog(err)
	}
	return d, nil
}

// handshake sends the child its configuration and waits until Pebble is
// open in it.
func (d *childDB) handshake(ctx context.Context, c childConfig) error {
	msg, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if _, err := d.ctl.Write(msg); err != nil {
		return fmt.Errorf("pebble child: send configuration: %w", err)
	}
	got := make(chan error, 1)
	go func() {
		buf := make([]byte, 64<<10)
		n, err := d.ctl.Read(buf)
		if err != nil {
			got <- fmt.Errorf("pebble child: exited before opening Pebble: %w", err)
			return
		}
		var r childReady
		if err := json.Unmarshal(buf[:n], &r); err != nil {
			got <- fmt.Errorf("pebble child: reply: %w", err)
		} else if r.Error != "" {
			got <- errors.New(r.Error)
		} else {
			got <- nil
		}
	}()
	select {
	case err := <-got:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// childDB is Pebble in a child process.
type childDB struct {
	cmd     *exec.Cmd
	ctl     net.Conn
	exited  chan struct{}
	exitErr error
	untrack func()
	crashed bool
	// log is the child's stderr ("": tierbench's own).
	log string
}

// withLog adds the end of the child's log to err.
func (d *childDB) withLog(err error) error {
	if d.log == "" {
		return err
	}
	if tail := strings.TrimSpace(logtail.File(d.log, 5)); tail != "" {
		return fmt.Errorf("%w; the end of its log %s:\n%s", err, d.log, tail)
	}
	return err
}

var (
	_ engine.Crasher = (*childDB)(nil)
	_ engine.PIDer   = (*childDB)(nil)
	_ engine.Checker = (*childDB)(nil)
)

func (d *childDB) Version() string { return Version() + " (in a child process)" }

// PID is the child's: the engine's CPU and memory are its own there.
func (d *childDB) PID() int { return d.cmd.Process.Pid }

// Crash kills the child at once (engine.Crasher).
func (d *childDB) Crash() error {
	d.crashed = true
	d.kill()
	return nil
}

// Check reports a child that exited on its own.
func (d *childDB) Check() error {
	select {
	case <-d.exited:
		if !d.crashed {
			return d.withLog(fmt.Errorf("pebble child exited: %v", d.exitErr))
		}
	default:
	}
	return nil
}

func (d *childDB) kill() {
	_ = proc.KillGroup(d.cmd.Process.Pid)
	<-d.exited
	d.untrack()
}

// Close ends the child's control socket, on which the child closes Pebble
// and exits; one that does not within childCloseWait is killed.
func (d *childDB) Close() error {
	if d.ctl != nil {
		d.ctl.Close()
	}
	select {
	case <-d.exited:
	case <-time.After(childCloseWait):
		d.kill()
		return fmt.Errorf("close pebble child: not closed after %s; killed", childCloseWait)
	}
	d.untrack()
	if d.crashed || d.exitErr == nil {
		if d.log != "" {
			os.Remove(d.log) // nothing in it to explain
		}
		return nil
	}
	return d.withLog(fmt.Errorf("close pebble child: %v", d.exitErr))
}

// NewSession hands the child one end of a new socketpair and speaks
// net/rpc on the other.
func (d *childDB) NewSession(context.Context) (engine.Session, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("pebble child: session socket: %w", err)
	}
	defer unix.Close(fds[1])
	uc, ok := d.ctl.(*net.UnixConn)
	if !ok {
		unix.Close(fds[0])
		return nil, errors.New("pebble child: control socket is not a unix socket")
	}
	if _, _, err := uc.WriteMsgUnix([]byte{'s'}, unix.UnixRights(fds[1]), nil); err != nil {
		unix.Close(fds[0])
		return nil, fmt.Errorf("pebble child: hand over a session: %w", d.explain(err))
	}
	f := os.NewFile(uintptr(fds[0]), "pebble-session")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return nil, err
	}
	return &childSession{d: d, c: rpc.NewClient(c)}, nil
}

// explain names a child that died under an error.
func (d *childDB) explain(err error) error {
	if err == nil {
		return nil
	}
	select {
	case <-d.exited:
		if d.crashed {
			return fmt.Errorf("%w (the pebble child exited: %v)", err, d.exitErr)
		}
		return d.withLog(fmt.Errorf("%w (the pebble child exited: %v)", err, d.exitErr))
	default:
	}
	return err
}

// childSession is one client's records model on the child.
type childSession struct {
	d *childDB
	c *rpc.Client
}

var (
	_ engine.Records      = (*childSession)(nil)
	_ engine.FieldsReader = (*childSession)(nil)
)

func (s *childSession) Close() error { return s.c.Close() }

func (s *childSession) call(method string, args, reply any) error {
	return s.d.explain(s.c.Call("Pebble."+method, args, reply))
}

func (s *childSession) Insert(_ context.Context, key []byte, fields [][]byte) error {
	return s.call("Insert", RecordArgs{Key: key, Fields: fields}, &struct{}{})
}

func (s *childSession) InsertBatch(_ context.Context, keys [][]byte, fields [][][]byte) error {
	return s.call("InsertBatch", BatchArgs{Keys: keys, Fields: fields}, &struct{}{})
}

func (s *childSession) Read(_ context.Context, key []byte) (bool, error) {
	var found bool
	err := s.call("Read", key, &found)
	return found, err
}

func (s *childSession) ReadFields(_ context.Context, key []byte) ([][]byte, error) {
	var fields [][]byte
	err := s.call("ReadFields", key, &fields)
	return fields, err
}

func (s *childSession) Update(_ context.Context, key []byte, fields []engine.Field) error {
	return s.call("Update", UpdateArgs{Key: key, Fields: fields}, &struct{}{})
}

func (s *childSession) Scan(_ context.Context, start []byte, count int) (int, error) {
	var n int
	err := s.call("Scan", ScanArgs{Start: start, Count: count}, &n)
	return n, err
}

// The child's RPC arguments (exported for net/rpc's gob).
type (
	RecordArgs struct {
		Key    []byte
		Fields [][]byte
	}
	BatchArgs struct {
		Keys   [][]byte
		Fields [][][]byte
	}
	UpdateArgs struct {
		Key    []byte
		Fields []engine.Field
	}
	ScanArgs struct {
		Start []byte
		Count int
	}
)

// Service is the child's RPC service: each call on a session of its own
// Pebble instance.
type Service struct{ d *DB }

func (s *Service) Insert(a RecordArgs, _ *struct{}) error {
	return (&Session{d: s.d}).Insert(context.Background(), a.Key, a.Fields)
}

func (s *Service) InsertBatch(a BatchArgs, _ *struct{}) error {
	return (&Session{d: s.d}).InsertBatch(context.Background(), a.Keys, a.Fields)
}

func (s *Service) Read(key []byte, found *bool) (err error) {
	*found, err = (&Session{d: s.d}).Read(context.Background(), key)
	return err
}

func (s *Service) ReadFields(key []byte, fields *[][]byte) (err error) {
	*fields, err = (&Session{d: s.d}).ReadFields(context.Background(), key)
	return err
}

func (s *Service) Update(a UpdateArgs, _ *struct{}) error {
	return (&Session{d: s.d}).Update(context.Background(), a.Key, a.Fields)
}

func (s *Service) Scan(a ScanArgs, n *int) (err error) {
	*n, err = (&Session{d: s.d}).Scan(context.Background(), a.Start, a.Count)
	return err
}

// childMain is the child: read the configuration, open Pebble, say so,
// serve every session handed over until the control socket ends, close.
func childMain() int {
	os.Unsetenv(childEnv)
	f := os.NewFile(3, "pebble-control")
	ctl, err := net.FileConn(f)
	f.Close()
	if err != nil {
		fmt.Fprintf(os.Stderr, "pebble child: %v\n", err)
		return 1
	}
	uc := ctl.(*net.UnixConn)
	buf := make([]byte, 64<<10)
	n, err := uc.Read(buf)
	if err != nil {
		return 1
	}
	var c childConfig
	reply := func(err error) {
		r := childReady{}
		if err != nil {
			r.Error = err.Error()
		}
		b, _ := json.Marshal(r)
		_, _ = uc.Write(b)
	}
	if err := json.Unmarshal(buf[:n], &c); err != nil {
		reply(err)
		return 1
	}
	db, err := Engine{}.Open(context.Background(), engine.Config{Dirs: c.Dirs, Options: c.Options, Durability: c.Durability, SyncDelays: c.SyncDelays})
	if err != nil {
		reply(err)
		return 1
	}
	srv := rpc.NewServer()
	if err := srv.RegisterName("Pebble", &Service{d: db.(*DB)}); err != nil {
		reply(err)
		return 1
	}
	reply(nil)
	oob := make([]byte, unix.CmsgSpace(4))
	for {
		n, oobn, _, _, err := uc.ReadMsgUnix(buf[:1], oob)
		if err != nil || n == 0 && oobn == 0 {
			break // the owner closed the DB, or is gone
		}
		for _, fd := range receivedFDs(oob[:oobn]) {
			sf := os.NewFile(uintptr(fd), "pebble-session")
			conn, err := net.FileConn(sf)
			sf.Close()
			if err == nil {
				go srv.ServeConn(conn)
			}
		}
	}
	if err := db.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "pebble child: %v\n", err)
		return 1
	}
	return 0
}

// receivedFDs parses the descriptors a control message carried.
func receivedFDs(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var out []int
	for _, m := range msgs {
		if fds, err := unix.ParseUnixRights(&m); err == nil {
			out = append(out, fds...)
		}
	}
	return out
}
