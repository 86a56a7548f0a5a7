// Package progress shows a study's progress to a person: on a terminal a bar
// for the whole study (runs done of total, elapsed, ETA) above the live
// per-second line of the current run; elsewhere (a log file, CI) plain lines.
package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Plain writes every line, live ones included, as ordinary lines: one
// progress line per second in a log.
type Plain struct {
	mu sync.Mutex
	w  io.Writer
}

// NewPlain returns a Plain writer to w.
func NewPlain(w io.Writer) *Plain { return &Plain{w: w} }

// Line writes a line to keep.
func (p *Plain) Line(s string) { p.write(s) }

// Live writes the current run's per-second line.
func (p *Plain) Live(s string) { p.write(s) }

// Runs notes how many runs are done; plain output says so in Line already.
func (p *Plain) Runs(done, total int) {}

func (p *Plain) write(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.w, s)
}

// Terminal keeps two lines at the bottom of a terminal, the study bar and
// the live line, and prints lines to keep above them.
type Terminal struct {
	mu          sync.Mutex
	w           io.Writer
	start       time.Time
	now         func() time.Time
	done, total int
	live        string
	drawn       bool
	width       int
}

// NewTerminal returns a Terminal renderer to w, width columns wide.
func NewTerminal(w io.Writer, width int) *Terminal {
	if width <= 20 {
		width = 100
	}
	return &Terminal{w: w, start: time.Now(), now: time.Now, width: width}
}

// Line prints s above the bar.
func (t *Terminal) Line(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.clear()
	fmt.Fprintln(t.w, s)
	t.draw()
}

// Live replaces the live line.
func (t *Terminal) Live(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.live = s
	t.clear()
	t.draw()
}

// Runs updates the study bar.
func (t *Terminal) Runs(done, total int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.done, t.total = done, total
	if done == total {
		t.live = ""
	}
	t.clear()
	t.draw()
}

// Close removes the bar, leaving the terminal clean for what follows.
func (t *Terminal) Close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.clear()
}

// clear erases the two bottom lines if they are drawn.
func (t *Terminal) clear() {
	if t.drawn {
		io.WriteString(t.w, "\r\x1b[2K\x1b[1A\r\x1b[2K")
		t.drawn = false
	}
}

func (t *Terminal) draw() {
	if t.total == 0 {
		return
	}
	fmt.Fprintf(t.w, "%s\n%s", clip(Bar(t.done, t.total, t.now().Sub(t.start), 30), t.width), clip(t.live, t.width))
	t.drawn = true
}

func clip(s string, width int) string {
	r := []rune(s)
	if len(r) >= width {
		return string(r[:width-1])
	}
	return s
}

// Bar renders "[#####.....] 5/24 runs  elapsed 1m05s  ETA 4m20s"; the ETA
// assumes the remaining runs take as long as the finished ones did.
func Bar(done, total int, elapsed time.Duration, width int) string {
	filled := 0
	if total > 0 {
		filled = done * width / total
	}
	eta := "ETA -"
	if done > 0 && done < total {
		eta = "ETA " + (elapsed / time.Duration(done) * time.Duration(total-done)).Round(time.Second).String()
	} else if done == total {
		eta = "done"
	}
	return fmt.Sprintf("[%s%s] %d/%d runs  elapsed %s  %s", strings.Repeat("#", filled), strings.Repeat(".", width-filled),
		done, total, elapsed.Round(time.Second), eta)
}
