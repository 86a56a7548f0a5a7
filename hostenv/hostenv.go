// Package hostenv records the machine a study ran on, so results can be
// compared honestly later: kernel, CPU, memory and tool versions.
package hostenv

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"golang.org/x/sys/unix"
)

// Env describes the host.
type Env struct {
	Hostname         string `json:"hostname"`
	Kernel           string `json:"kernel"`
	OS               string `json:"os"`
	CPUModel         string `json:"cpu_model"`
	CPUs             int    `json:"cpus"`
	MemoryBytes      uint64 `json:"memory_bytes"`
	GoVersion        string `json:"go_version"`
	TierbenchVersion string `json:"tierbench_version"`
}

// Capture reads the current host's facts; a fact it cannot read is left empty.
func Capture() Env {
	e := Env{OS: runtime.GOOS + "/" + runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version(),
		TierbenchVersion: Version()}
	e.Hostname, _ = os.Hostname()
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		e.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	e.MemoryBytes = MemoryBytes()
	e.CPUModel = cpuModel()
	return e
}

// SameMachine reports whether e and o describe the same machine: the
// same hostname, CPU model and CPU count, so that studies run on them may
// be compared. A fact either left empty (unreadable, or not recorded
// when the study ran) is not compared. Kernel, memory and versions are
// left out: they change on one machine (an upgrade, a resized VM) and a
// comparison across them may be the very point.
func (e Env) SameMachine(o Env) bool {
	differ := func(a, b string) bool { return a != "" && b != "" && a != b }
	return !differ(e.Hostname, o.Hostname) && !differ(e.CPUModel, o.CPUModel) && !(e.CPUs > 0 && o.CPUs > 0 && e.CPUs != o.CPUs)
}

// Machine names the machine for messages: "ci-7 (4 CPUs, AMD EPYC 7B13)".
func (e Env) Machine() string {
	name := e.Hostname
	if name == "" {
		name = "an unnamed host"
	}
	var facts []string
	if e.CPUs > 0 {
		facts = append(facts, fmt.Sprintf("%d CPUs", e.CPUs))
	}
	if e.CPUModel != "" {
		facts = append(facts, e.CPUModel)
	}
	if len(facts) == 0 {
		return name
	}
	return name + " (" + strings.Join(facts, ", ") + ")"
}

// MemoryBytes is the machine's memory, 0 when it cannot be read.
func MemoryBytes() uint64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return 0
	}
	return uint64(si.Totalram) * uint64(si.Unit)
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// version is set at link time by the Makefile (-X ...hostenv.version=...).
var version string

// Version is tierbench's version: the one stamped at link time, else the
// module version when built from a tagged module, else the VCS revision,
// else "dev".
func Version() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return "dev-" + s.Value[:12]
		}
	}
	return "dev"
}
