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
	"strings"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/workload"
)

// Builtin names tierbench's own driver.
const Builtin = "builtin"

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
	// Workload is the run's configured workload (its Params give the
	// effective values, such as tpcb's scale).
	Workload workload.Workload
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
