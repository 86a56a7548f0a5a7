package procfs

import (
	"os"
	"slices"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       Stat
		err        bool
	}{
		{"a command name with spaces and a parenthesis",
			"4242 (tier (bench) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 17 5 0 0 20 0 3 0 123456 1000 250 18446744073709551615",
			Stat{Comm: "tier (bench) x", State: 'S', PPID: 1, Flags: 4194560, UTime: 17, STime: 5, StartTicks: 123456, RSSPages: 250}, false},
		{"a zombie", "7 (sh) Z 1 7 7 0 -1 4 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0 0", Stat{Comm: "sh", State: 'Z', PPID: 1, Flags: 4, StartTicks: 99}, false},
		{"cut short", "7 (sh) S 1 7", Stat{}, true},
		{"no command name", "7 sh S", Stat{}, true},
	} {
		got, err := Parse(tc.text)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v, error %v", tc.name, got, err, tc.want, tc.err)
		}
	}
}

func TestOfThisProcess(t *testing.T) {
	st, err := Of(os.Getpid())
	if err != nil || st.StartTicks == 0 || st.RSSPages == 0 {
		t.Errorf("this process: %+v, %v", st, err)
	}
}

// TestPIDsListsThisProcess: the list holds this process and PID 1.
func TestPIDsListsThisProcess(t *testing.T) {
	pids, err := PIDs()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pids, os.Getpid()) || !slices.Contains(pids, 1) {
		t.Errorf("PIDs() = %d processes, without this one (%d) or PID 1", len(pids), os.Getpid())
	}
}
