package catalog

import (
	"testing"

	"github.com/tierbench/tierbench/engine"
)

// TestEveryEngineIsBoundedAndChecked checks the catalog's promises to study
// validation: every engine has a client bound with its reason, a role for
// each component (and at most one commit log), its option
// defaults read as their declared kinds, every engine that starts programs
// can say up front whether they are installed, and every standard tool can
// too.
func TestEveryEngineIsBoundedAndChecked(t *testing.T) {
	c := Default()
	for _, name := range c.EngineNames() {
		s, _ := c.EngineSpec(name)
		if s.MaxClients <= 0 || s.MaxClientsWhy == "" {
			t.Errorf("engine %s: no client bound (MaxClients %d, why %q)", name, s.MaxClients, s.MaxClientsWhy)
		}
		if len(s.Components) == 0 {
			t.Errorf("engine %s declares no components; its first holds the data set", name)
		}
		commitLogs := 0
		for _, comp := range s.Components {
			if comp.Role == "" {
				t.Errorf("engine %s: component %s has no role: the analysis reads roles, not names", name, comp.Name)
			}
			if comp.Role == engine.RoleCommitLog {
				commitLogs++
			}
		}
		if commitLogs > 1 {
			t.Errorf("engine %s: %d commit logs; the analysis takes one", name, commitLogs)
		}
		if _, err := s.ResolveOptions(nil); err != nil {
			t.Errorf("engine %s: %v", name, err)
		}
		e, _ := c.Engine(name)
		if _, ok := e.(engine.Preflighter); !ok && name != "pebble" {
			t.Errorf("engine %s starts programs but has no Preflight", name)
		}
	}
	for _, name := range c.ToolNames() {
		if tl, _ := c.Tool(name); tl.Preflight == nil {
			t.Errorf("tool %s has no Preflight", name)
		}
	}
}
