package ceph

import (
	"fmt"
	"os/exec"
	"strings"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/host/proc"
)

// programs are what a run starts or calls, each with the Debian package
// that installs it.
var programs = []struct{ name, pkg string }{
	{"ceph-mon", "ceph-mon"},
	{"ceph-mgr", "ceph-mgr"},
	{"ceph-osd", "ceph-osd"},
	{"radosgw", "radosgw"},
	{"monmaptool", "ceph-base"},
	{"ceph", "ceph-common"},
	{"radosgw-admin", "ceph-common"},
}

// packages is the install command's list: the packages `make setup`
// installs, which bring ceph-base with them.
const packages = "ceph-mon ceph-mgr ceph-osd radosgw ceph-common"

// cephUser is the OS user Debian's ceph-common makes, which the daemons
// run as.
const cephUser = "ceph"

// binaries maps each program to where it is.
type binaries map[string]string

func (b binaries) path(program string) string { return b[program] }

// findBinaries finds every program, or names all that are missing and
// the packages to install.
func findBinaries() (binaries, error) {
	b := binaries{}
	var missing []string
	for _, p := range programs {
		path, err := exec.LookPath(p.name)
		if err != nil {
			missing = append(missing, p.name)
			continue
		}
		b[p.name] = path
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("Ceph is not installed (%s missing): apt-get install %s, or run `make setup`: %w",
			strings.Join(missing, ", "), packages, proc.ErrNotInstalled)
	}
	return b, nil
}

// Preflight reports whether Ceph's programs and its OS user are here, so
// a study is refused before it creates anything.
func (e Engine) Preflight() error { return e.PreflightOptions(e.Spec().MustResolveOptions(nil)) }

// PreflightOptions is Preflight for a run's options, which are checked
// too (replicas beyond osds, a device too small), so a study is refused
// before its first run rather than failing every run alike.
func (Engine) PreflightOptions(options engine.Options) error {
	if _, err := findBinaries(); err != nil {
		return err
	}
	if _, err := proc.RunAs("Ceph's daemons", "ceph-common", cephUser); err != nil {
		return err
	}
	_, err := settingsOf(options)
	return err
}

// ServerUser is the OS user the daemons run as (none when tierbench is not
// root), for study preflight's check that it can reach the tiers' folders.
func (Engine) ServerUser() (label, user string) {
	u, _ := proc.RunAs("Ceph's daemons", "ceph-common", cephUser)
	return "Ceph", u
}
