package ignite

// This file holds what a crash run asks of the cluster: the cut and the
// client's record of puts (cutRun), killing every node (Crash), and the
// read-back after the restart (ReadIDs).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
)

var (
	_ engine.Crasher     = (*DB)(nil)
	_ engine.NodeCrasher = (*DB)(nil)
	_ engine.CacheReader = (*DB)(nil)
)

// Crash kills every node's JVM at once (SIGKILL) and waits for them: a
// process crash of the whole cluster. What the nodes wrote stays with the
// operating system. A client JVM still running is left to report.
func (d *DB) Crash() error {
	errs := make(chan error, len(d.nodes))
	for _, n := range d.nodes {
		go func() { errs <- n.proc.Crash() }()
	}
	var all []error
	for range d.nodes {
		all = append(all, <-errs)
	}
	return errors.Join(all...)
}

// CrashNodes kills the last n nodes' JVMs at once (SIGKILL): node0, which
// activated the cluster, and the others run on.
func (d *DB) CrashNodes(n int) error {
	if n < 1 || n >= len(d.nodes) {
		return fmt.Errorf("ignite: cannot crash %d of %d nodes: leave at least one, crash at least one", n, len(d.nodes))
	}
	victims := d.nodes[len(d.nodes)-n:]
	errs := make(chan error, n)
	for _, v := range victims {
		v.crashed = true
		go func() { errs <- v.proc.Crash() }()
	}
	var all []error
	for range victims {
		all = append(all, <-errs)
	}
	return errors.Join(all...)
}

// RestartNodes starts the nodes CrashNodes killed on what they left and
// waits until each has started and rejoined the running cluster.
func (d *DB) RestartNodes(ctx context.Context) error {
	restarted := map[*node]bool{}
	for i, n := range d.nodes {
		if !n.crashed {
			continue
		}
		// The crashed JVM is gone; Stop releases its log file and record,
		// which would otherwise hold the log's tier busy until the garbage
		// collector closed the file.
		_ = n.proc.Stop(0)
		if err := d.startNode(i); err != nil {
			return fmt.Errorf("restart ignite %s: %w", n.id, err)
		}
		n.crashed, restarted[n] = false, true
	}
	return d.waitReady(ctx, func(n *node) bool { return restarted[n] })
}

// cutRun reads a crash run's client lines: at "cut" it runs the crash,
// and it hands the puts of "acks" lines to the workload's record; every
// other line goes to next.
type cutRun struct {
	cfg   driver.Config
	work  engine.CacheWork
	next  func([]byte)
	begin time.Time // the client's run began, on this clock; set at the cut
	cut   bool
	bad   error
}

// cutLine is a "cut" or "acks" line.
type cutLine struct {
	Type string  `json:"type"`
	AtNs int64   `json:"at_ns"`
	W    []int64 `json:"w"`
}

func (c *cutRun) line(b []byte) {
	if !bytes.Contains(b, []byte(`"type":"cut"`)) && !bytes.Contains(b, []byte(`"type":"acks"`)) {
		c.next(b)
		return
	}
	var m cutLine
	if err := json.Unmarshal(b, &m); err != nil {
		c.fail(fmt.Errorf("the Ignite client's %q line: %w", m.Type, err))
		return
	}
	switch m.Type {
	case "cut":
		c.begin = time.Now().Add(-time.Duration(m.AtNs))
		c.cut = true
		c.cfg.Cut()
	case "acks":
		if !c.cut || len(m.W)%4 != 0 {
			c.fail(errors.New("the Ignite client reported puts before its cut, or a malformed acks line"))
			return
		}
		if c.work.OnWrite == nil {
			return
		}
		for i := 0; i < len(m.W); i += 4 {
			w := engine.CacheWrite{Key: m.W[i], ID: m.W[i+1], Start: c.begin.Add(time.Duration(m.W[i+2]))}
			if end := m.W[i+3]; end >= 0 {
				w.End, w.Acked = c.begin.Add(time.Duration(end)), true
			}
			c.work.OnWrite(w)
		}
	}
}

func (c *cutRun) fail(err error) {
	if c.bad == nil {
		c.bad = err
	}
}

// ReadIDs reads keys back through a client JVM ("read" mode, the keys on
// its standard input) and returns the id each present value begins with.
// first is when the client said the cluster answered its first read: the
// client's own start and join are in it, as an application's reconnect
// would be.
func (d *DB) ReadIDs(ctx context.Context, keys []int64, valueSize int) (map[int64]int64, time.Time, error) {
	// A client waits for servers to join for ever: bound it by a
	// cluster's start and a generous millisecond per key.
	ctx, cancel := context.WithTimeout(ctx, startTimeout+time.Duration(len(keys))*time.Millisecond)
	defer cancel()
	var in strings.Builder
	for _, k := range keys {
		in.WriteString(strconv.FormatInt(k, 10))
		in.WriteByte('\n')
	}
	ids := make(map[int64]int64, len(keys))
	var (
		first time.Time
		bad   error
	)
	err := d.runClient(ctx, "read", []string{"--value-size=" + strconv.Itoa(valueSize)}, strings.NewReader(in.String()), func(b []byte) {
		switch {
		case bytes.Contains(b, []byte(`"type":"first"`)):
			first = time.Now()
		case bytes.Contains(b, []byte(`"type":"ids"`)):
			var m struct {
				KV []int64 `json:"kv"`
			}
			if err := json.Unmarshal(b, &m); err != nil || len(m.KV)%2 != 0 {
				if bad == nil {
					bad = fmt.Errorf("the Ignite client's ids line %.120q: malformed", b)
				}
				return
			}
			for i := 0; i < len(m.KV); i += 2 {
				ids[m.KV[i]] = m.KV[i+1]
			}
		}
	})
	if err == nil && first.IsZero() {
		err = errors.New("the Ignite client read nothing back")
	}
	return ids, first, errors.Join(err, bad)
}
