package ignite

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/tierbench/tierbench/images"
)

var _ images.LabImager = Engine{}

// LabImage is the image the Ignite engine's pods run tierbench's launcher
// in on the lab node (`tierbench cluster up`): Debian's Java 17 runtime
// and the Ignite 2.16 jars of this machine's build (LibDir, from Maven
// Central) where the official apacheignite/ignite:2.16.0 has them
// (ImageLibDir), and a user of uid podUID, which the pods run as. The
// launcher's own jar is mounted by the run, as on any cluster. Without
// the launcher's build there is no image (images.ErrNoLabImage).
func (Engine) LabImage() (images.Recipe, error) {
	libDir, err := LibDir()
	if err != nil {
		return images.Recipe{}, fmt.Errorf("ignite image: %w: %w", images.ErrNoLabImage, err)
	}
	jars, err := filepath.Glob(filepath.Join(libDir, "*.jar"))
	if err != nil || len(jars) == 0 {
		return images.Recipe{}, fmt.Errorf("ignite image: no jars in %s: run make setup (it builds java/ignite)", libDir)
	}
	sort.Strings(jars)
	r := images.Recipe{
		Name:     "tierbench.local/ignite:2.16.0",
		Suite:    images.Suite,
		Packages: []string{"openjdk-17-jre-headless"},
		Hooks:    []string{images.AddUserHook("ignite", podUID, podScratch)},
		Config:   images.Config{Env: []string{"PATH=" + images.StdPath}, User: strconv.Itoa(podUID), WorkingDir: podScratch},
	}
	for _, j := range jars {
		b, err := os.ReadFile(j)
		if err != nil {
			return images.Recipe{}, fmt.Errorf("ignite image: %w", err)
		}
		r.Files = append(r.Files, images.File{Path: ImageLibDir + "/" + filepath.Base(j), Mode: 0o644, Data: b})
	}
	return r, nil
}
