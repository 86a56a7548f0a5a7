// Package tool lets a standard benchmark tool (pgbench, sysbench) drive a
// run instead of tierbench's own driver, so one study can put tierbench's
// numbers beside those of the tool everyone trusts. A tool connects to the
// run's server on its own (engine.Served) and reports through
// driver.External, so its runs land in the same schema, marked with the
// driver's name.
//
// The data set is always loaded by tierbench's workload (tpcb loads
// pgbench's tables, the oltp workloads sysbench's), so every driver of a
// study measures the same data.
package tool

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/setting"
	"github.com/tierbench/tierbench/workload"
)

// Builtin names tierbench's own driver.
const Builtin = "builtin"

// MaxLanes bounds a driver's lanes= (a lane is a goroutine and its thread).
const MaxLanes = 64

// LanesSyntax is how a study names the builtin driver with its lanes set.
const LanesSyntax = "builtin:lanes=N (N from 0, a goroutine per client, to 64)"

// IsBuiltin reports whether driver d is tierbench's own, with its lanes
// set or not.
func IsBuiltin(d string) bool { return d == Builtin || strings.HasPrefix(d, Builtin+":") }

// BuiltinLanes reads driver d, "builtin" or "builtin:lanes=N": the lanes
// its clients run on (set false: the driver's default, driver.DefaultLanes),
// so a study can put lane counts side by side as drivers, each compared
// with the first round by round. An error names what is wrong with d.
func BuiltinLanes(d string) (lanes int, set bool, err error) {
	if d == Builtin {
		return 0, false, nil
	}
	v, ok := strings.CutPrefix(d, Builtin+":lanes=")
	if !ok {
		return 0, false, fmt.Errorf("driver %q: the builtin driver takes one setting, written %s", d, LanesSyntax)
	}
	n, perr := strconv.Atoi(v)
	if perr != nil || n < 0 || n > MaxLanes || strconv.Itoa(n) != v {
		return 0, false, fmt.Errorf("driver %q: lanes must be a whole number from 0 to %d, written %s", d, MaxLanes, LanesSyntax)
	}
	return n, true, nil
}

// Tool is one standard tool usable as a driver.
type Tool struct {
	Name string
	Doc  string
	// Check says whether the tool can drive the engine with the workload,
	// or why not, for study validation.
	Check func(engineName, workloadName string) error
	// New returns the load generator for one run.
	New func(req Request) (driver.External, error)
	// Preflight, when set, says before a study creates anything whether
	// the tool is installed, or how to install it.
	Preflight func() error
}

// Request is what a tool needs for one run.
type Request struct {
	Engine       string
	WorkloadName string
	// Workload is the run's configured workload.
	Workload workload.Workload
	// Params are the workload's resolved parameters (workload.Spec.Resolve),
	// the effective values, such as a bulk's size, a tool is told.
	Params setting.Values
	// DB is the running server; it implements engine.Served.
	DB engine.DB
	// Dir is a folder for the tool's logs, removed after the run.
	Dir string
}

// Endpoint returns the request's server address or an error naming the gap.
func (r Request) Endpoint() (engine.Endpoint, error) {
	s, ok := r.DB.(engine.Served)
	if !ok {
		return engine.Endpoint{}, fmt.Errorf("engine %s is not a server a standard tool can connect to", r.Engine)
	}
	return s.Endpoint(), nil
}

// Mismatch is a tool's Check error when it cannot drive the pair: drives
// says what it drives ("sysbench drives engines postgres and mariadb with
// workloads ..."), and the error adds which of the two it does not.
func Mismatch(drives string, engineOK bool, engineName string, workloadOK bool, workloadName string) error {
	if engineOK && workloadOK {
		return nil
	}
	var not []string
	if !engineOK {
		not = append(not, "engine "+engineName)
	}
	if !workloadOK {
		not = append(not, "workload "+workloadName)
	}
	return fmt.Errorf("%s, not %s", drives, strings.Join(not, " or "))
}

// WorkDir returns the folder a tool's run writes its logs and files to:
// dir when the runner gave one, else a new temporary folder named after
// the tool. done removes what WorkDir made (nothing when dir was given).
func WorkDir(dir, name string) (_ string, done func(), err error) {
	if dir != "" {
		return dir, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "tierbench-"+name+"-")
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", name, err)
	}
	return tmp, func() { os.RemoveAll(tmp) }, nil
}
