package emulate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// A mount's helper takes commands from its owner: one JSON command a line
// on its file descriptor 4, answered by one JSON reply a line on its
// descriptor 3, after the readiness message there. The helper runs them
// one at a time, in order. When the owner dies the command pipe ends, and
// the helper goes on as any helper does: it notices the owner is gone,
// unmounts and exits. Only a crashable mount's helper takes the power
// commands; every helper takes a new overhead.

// The commands.
const (
	opSettle   = "settle"
	opCut      = "power-cut"
	opOn       = "power-on"
	opOverhead = "overhead"
)

// commandWait bounds how long the owner waits for a command's reply: a
// power cut rolls back everything written since the last fsyncs, which
// can take a while on a large tier.
const commandWait = 10 * time.Minute

type command struct {
	Op string `json:"op"`
	// Overhead is opOverhead's new overhead.
	Overhead time.Duration `json:"overhead_ns,omitempty"`
	// Model is opCut's power-loss model.
	Model Model `json:"model,omitempty"`
}

type reply struct {
	Error string `json:"error,omitempty"`
	Loss  *Loss  `json:"loss,omitempty"`
}

// control is the owner's end of a helper's command channel.
type control struct {
	mu      sync.Mutex
	cmds    *os.File // the helper's descriptor 4
	replies *os.File // the helper's descriptor 3
	dec     *json.Decoder
	// broken is why the channel cannot be used any more: a reply that
	// never came would be read as the next command's.
	broken error
}

func (c *control) close() {
	c.cmds.Close()
	c.replies.Close()
}

// Settle makes everything done on the mount so far durable, as the
// kernel's writeback would have long after it was written: the runner
// calls it just before the measured window, so that a power cut loses
// only what was written during the run and not yet fsynced.
func (s *Server) Settle() error {
	_, err := s.command(opSettle)
	return err
}

// PowerCut cuts the mount's power: once the operations under way are
// done, every operation on the mount fails with EIO, without touching the
// backing folder, until PowerOn. The backing folder is rolled back to its
// durable state and the kernel made to forget what it cached of the rest,
// so that after PowerOn the mount shows only what was durable. Loss says
// what was undone. Kill the processes using the mount before PowerOn.
func (s *Server) PowerCut() (Loss, error) { return s.PowerCutModel(Model{}) }

// PowerCutModel is PowerCut under power-loss model m: m decides which
// unsynced data survives the rollback.
func (s *Server) PowerCutModel(m Model) (Loss, error) {
	r, err := s.send(command{Op: opCut, Model: m})
	if r.Loss == nil {
		return Loss{}, err
	}
	return *r.Loss, err
}

// PowerOn lets operations on the mount succeed again; what the mount
// holds now is its durable state, and changes are tracked afresh from it.
//
// The cut leaves the kernel holding a write-back error on the mount (the
// killed processes' last writes failed), which it would report to the
// next syncfs(2) of any file on it, even one opened long after: a machine
// that lost its power reboots without it. PowerOn reads it once, so that
// it reaches nobody.
func (s *Server) PowerOn() error {
	if _, err := s.command(opOn); err != nil {
		return err
	}
	if f, err := os.Open(s.mountPoint); err == nil {
		_ = unix.Syncfs(int(f.Fd()))
		f.Close()
	}
	return nil
}

// SetOverhead makes d the layer's own cost taken off every delay, in
// place of what it measured (or took) at mount: for tiers of one spec
// whose layers measured apart side by side (FsyncAlongside), each is
// corrected by what its own figure missed the asked latency by.
func (s *Server) SetOverhead(d time.Duration) error {
	if _, err := s.send(command{Op: opOverhead, Overhead: d}); err != nil {
		return err
	}
	s.calibration.Overhead = d
	return nil
}

// command sends the helper one command and waits for its reply.
func (s *Server) command(op string) (reply, error) { return s.send(command{Op: op}) }

// send sends the helper cmd and waits for its reply.
func (s *Server) send(cmd command) (reply, error) {
	op := cmd.Op
	r, err := s.ctl.call(cmd, s.exited)
	if err == nil && r.Error != "" {
		err = errors.New(r.Error)
	}
	if err != nil {
		return r, fmt.Errorf("emulate: %s of %s: %w", op, s.mountPoint, err)
	}
	return r, nil
}

func (c *control) call(cmd command, exited <-chan struct{}) (reply, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken != nil {
		return reply{}, c.broken
	}
	if err := json.NewEncoder(c.cmds).Encode(cmd); err != nil {
		c.broken = fmt.Errorf("the latency server takes no more commands: %w", err)
		return reply{}, c.broken
	}
	got := make(chan reply, 1)
	failed := make(chan error, 1)
	go func() {
		var r reply
		if err := c.dec.Decode(&r); err != nil {
			failed <- err
			return
		}
		got <- r
	}()
	select {
	case r := <-got:
		return r, nil
	case err := <-failed:
		c.broken = fmt.Errorf("no reply from the latency server: %w", err)
	case <-exited:
		c.broken = errors.New("the latency server has exited")
	case <-time.After(commandWait):
		c.broken = fmt.Errorf("the latency server did not reply within %v", commandWait)
	}
	return reply{}, c.broken
}

// serveCommands runs the owner's commands on s until the owner closes the
// channel (or dies).
func serveCommands(in io.Reader, out io.Writer, s *fsServer) {
	dec := json.NewDecoder(in)
	enc := json.NewEncoder(out)
	for {
		var cmd command
		if err := dec.Decode(&cmd); err != nil {
			return
		}
		var r reply
		switch {
		case cmd.Op == opOverhead && cmd.Overhead >= 0:
			s.delays.overhead.Store(int64(cmd.Overhead))
		case cmd.Op == opOverhead:
			r.Error = fmt.Sprintf("negative overhead %v", cmd.Overhead)
		case s.crash == nil:
			r.Error = fmt.Sprintf("%s needs a crashable mount (Options.Crashable)", cmd.Op)
		default:
			r = s.crash.run(cmd)
		}
		if err := enc.Encode(r); err != nil {
			return
		}
	}
}
