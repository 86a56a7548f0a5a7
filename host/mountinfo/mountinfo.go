// Package mountinfo reads the kernel's mount table: the one place that
// opens /proc/self/mountinfo and the one parser of its lines, which every
// tierbench package that needs mounts (tiers, cgroups, probes) shares.
package mountinfo

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Mount is one line of /proc/<pid>/mountinfo (see proc(5)).
type Mount struct {
	ID           int    // the mount's ID, as /proc/<pid>/fdinfo's mnt_id names it
	DevID        string // major:minor
	Root         string // the mounted folder within its filesystem
	Point        string
	FSType       string
	Source       string
	MountOptions string // per-mount options (rw/ro, nosuid, ...)
	SuperOptions string // filesystem options
}

// Options joins the per-mount and filesystem options.
func (m Mount) Options() string {
	if m.SuperOptions == "" {
		return m.MountOptions
	}
	return m.MountOptions + "," + m.SuperOptions
}

// Read lists this process's mount table in mount order.
func Read() ([]Mount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("read mounts: %w", err)
	}
	defer f.Close()
	ms, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("read mounts: %w", err)
	}
	return ms, nil
}

// At finds the mount whose mount point is exactly dir (the newest, when
// several are stacked there); false when dir is no mount point or the table
// cannot be read. It reads the table rather than stat-ing dir, which would
// fail on a dead FUSE mount and hang on a stuck one.
func At(dir string) (Mount, bool) {
	ms, err := Read()
	if err != nil {
		return Mount{}, false
	}
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Point == dir {
			return ms[i], true
		}
	}
	return Mount{}, false
}

// Parse reads mountinfo lines:
// id parent major:minor root point options [optional...] - fstype source superopts
// Lines that do not parse are skipped.
func Parse(r io.Reader) ([]Mount, error) {
	var ms []Mount
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		if m, ok := ParseLine(sc.Text()); ok {
			ms = append(ms, m)
		}
	}
	return ms, sc.Err()
}

// ParseLine parses one mountinfo line.
func ParseLine(line string) (Mount, bool) {
	fields := strings.Fields(line)
	sep := -1
	for i, f := range fields {
		if f == "-" {
			sep = i
			break
		}
	}
	if sep < 6 || len(fields) < sep+3 {
		return Mount{}, false
	}
	id, _ := strconv.Atoi(fields[0])
	m := Mount{ID: id, DevID: fields[2], Root: Unescape(fields[3]), Point: Unescape(fields[4]), MountOptions: fields[5],
		FSType: fields[sep+1], Source: Unescape(fields[sep+2])}
	if len(fields) > sep+3 {
		m.SuperOptions = fields[sep+3]
	}
	return m, true
}

// Unescape undoes the \040-style octal escapes of /proc mount tables.
func Unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
