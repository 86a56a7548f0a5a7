package study

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/setting"
	"github.com/tierbench/tierbench/workload"
)

// workloadMachine is a machine that names workloads, as the catalog does:
// its ycsb-a needs for its load what the case says.
type workloadMachine struct {
	machine
	err error
}

func (m workloadMachine) Workload(name string) (workload.Spec, bool) {
	s := ycsbSpec
	s.New = func(setting.Values) (workload.Workload, error) { return needyWorkload{m.err}, nil }
	return s, name == "ycsb-a"
}

// needyWorkload is a workload whose load needs something installed.
type needyWorkload struct{ err error }

func (needyWorkload) Ops() []string { return []string{"read"} }
func (needyWorkload) Load(context.Context, engine.DB, int) (workload.LoadStats, error) {
	return workload.LoadStats{}, nil
}
func (needyWorkload) NewClient(int, engine.Session) (workload.Client, error) { return nil, nil }
func (w needyWorkload) Preflight() error                                     { return w.err }

// TestPreflightWorkload checks that a workload whose load needs a program
// (workload.Preflighter) is asked, and its answer is the study's problem.
func TestPreflightWorkload(t *testing.T) {
	fill, _, _ := fixture(t)
	st := mustParse(t, fill(example))
	for _, c := range []struct {
		name string
		m    Machine
		want string // "" when ready
	}{
		{name: "ready", m: workloadMachine{}},
		{name: "generator missing", m: workloadMachine{err: errors.New("the generator is not installed: run make setup")},
			want: "workload ycsb-a cannot load on this machine: the generator is not installed: run make setup"},
		{name: "a machine that names no workloads", m: machine{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Preflight(st, c.m, t.TempDir())
			switch {
			case c.want == "" && err != nil:
				t.Errorf("Preflight = %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("Preflight = %v, want %q", err, c.want)
			}
		})
	}
}
