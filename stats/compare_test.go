package stats

import (
	"reflect"
	"testing"

	"github.com/tierbench/tierbench/results"
)

func TestDurabilitySide(t *testing.T) {
	st := &results.Study{Clients: []int{4, 8}, Placements: []results.Placement{{Name: "a"}, {Name: "b"}}}
	runs := []results.Run{
		{Placement: "a", Durability: "sync", Clients: 4, Status: results.RunOK},
		{Placement: "a", Durability: "async", Clients: 4, Status: results.RunOK},
		{Placement: "b", Durability: "sync", Clients: 8, Status: results.RunOK},
		{Placement: "b", Durability: "sync", Clients: 8, Status: results.RunFailed},
	}
	s := DurabilitySide(st, runs, "sync")
	if s.Label != "sync" || !reflect.DeepEqual(s.Order, []string{"a c=4", "b c=4", "a c=8", "b c=8"}) {
		t.Errorf("label %q order %v", s.Label, s.Order)
	}
	if len(s.Runs["a c=4"]) != 1 || len(s.Runs["b c=8"]) != 1 || len(s.Runs["b c=4"]) != 0 {
		t.Errorf("runs %v", s.Runs)
	}
}
