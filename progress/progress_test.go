package progress

import (
	"strings"
	"testing"
	"time"
)

func TestBar(t *testing.T) {
	cases := []struct {
		done, total int
		elapsed     time.Duration
		want        string
	}{
		{0, 4, 0, "[..........] 0/4 runs  elapsed 0s  ETA -"},
		{1, 4, 10 * time.Second, "[##........] 1/4 runs  elapsed 10s  ETA 30s"},
		{4, 4, 40 * time.Second, "[##########] 4/4 runs  elapsed 40s  done"},
	}
	for _, tc := range cases {
		if got := Bar(tc.done, tc.total, tc.elapsed, 10); got != tc.want {
			t.Errorf("Bar(%d,%d): %q, want %q", tc.done, tc.total, got, tc.want)
		}
	}
}

func TestTerminalKeepsLinesAboveTheBar(t *testing.T) {
	var b strings.Builder
	term := NewTerminal(&b, 80)
	term.Runs(0, 2)
	term.Live("1.0s 1000 ops/s")
	term.Line("run 1 ok")
	term.Runs(1, 2)
	term.Close()
	out := b.String()
	if !strings.Contains(out, "run 1 ok\n") || !strings.Contains(out, "1/2 runs") || !strings.Contains(out, "\x1b[1A") {
		t.Errorf("unexpected terminal output %q", out)
	}
	if !strings.HasSuffix(out, "\x1b[2K\x1b[1A\r\x1b[2K") {
		t.Errorf("Close did not erase the bar: %q", out[len(out)-20:])
	}
}

func TestPlainWritesEveryLine(t *testing.T) {
	var b strings.Builder
	p := NewPlain(&b)
	p.Runs(0, 1)
	p.Live("tick")
	p.Line("done")
	if b.String() != "tick\ndone\n" {
		t.Errorf("got %q", b.String())
	}
}
