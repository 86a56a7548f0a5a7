package server

import (
	"os"
	"path/filepath"
)

// BuildDirs lists the folders where the build of the project's Java module
// java/<module> (made by `make setup`) is looked for, in order: $env (or
// its target/), ../lib/tierbench/<module> from the executable's folder (an
// installed binary: `make install`), then java/<module>/target from the
// executable's folder and its parents (bin/tierbench in the source tree)
// and from the current folder and its parents (go test runs in the
// package's folder).
func BuildDirs(module, env string) []string {
	var out []string
	if v := os.Getenv(env); v != "" {
		out = append(out, v, filepath.Join(v, "target"))
	}
	up := func(d string) {
		for {
			out = append(out, filepath.Join(d, "java", module, "target"))
			parent := filepath.Dir(d)
			if parent == d {
				return
			}
			d = parent
		}
	}
	if exe, err := os.Executable(); err == nil {
		if r, err := filepath.EvalSymlinks(exe); err == nil {
			exe = r
		}
		out = append(out, filepath.Join(filepath.Dir(exe), "..", "lib", "tierbench", module))
		up(filepath.Dir(exe))
	}
	if wd, err := os.Getwd(); err == nil {
		up(wd)
	}
	return out
}
