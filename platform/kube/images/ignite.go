package images

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// Ignite is the image the Ignite engine's pods run tierbench's launcher
// in: Debian's Java 17 runtime and the Ignite 2.16 jars of this machine's
// build (libDir: the launcher's lib folder, from Maven Central) where the
// official apacheignite/ignite:2.16.0 has them, and a user of uid 10001,
// which the pods run as. The launcher's own jar is mounted by the run, as
// on any cluster. dest is where the pods' command line looks for Ignite's
// jars (ignite.ImageLibDir).
func Ignite(libDir, dest string) (Recipe, error) {
	jars, err := filepath.Glob(filepath.Join(libDir, "*.jar"))
	if err != nil || len(jars) == 0 {
		return Recipe{}, fmt.Errorf("ignite image: no jars in %s: run make setup (it builds java/ignite)", libDir)
	}
	sort.Strings(jars)
	r := Recipe{
		Name:     "tierbench.local/ignite:2.16.0",
		Suite:    Suite,
		Packages: []string{"openjdk-17-jre-headless"},
		Hooks:    []string{addUserHook("ignite", 10001, "/tmp")},
		Config:   Config{Env: []string{"PATH=" + StdPath}, User: "10001", WorkingDir: "/tmp"},
	}
	for _, j := range jars {
		b, err := os.ReadFile(j)
		if err != nil {
			return Recipe{}, fmt.Errorf("ignite image: %w", err)
		}
		r.Files = append(r.Files, File{Path: dest + "/" + filepath.Base(j), Mode: 0o644, Data: b})
	}
	return r, nil
}
