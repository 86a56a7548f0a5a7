package search

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/images"
)

var _ images.LabImager = Engine{}

// LabImage is RunnerImage, the image the opensearch engine's pod runs its
// node in on the lab node (`tierbench cluster up`): Debian's Java 17, curl
// (the readiness probe) and this machine's build of the OpenSearch runner
// (its jar and lib/, OpenSearch 2.19 from Maven Central; its distribution
// is not there) in RunnerPodDir, and a user of uid podUID, which the pod
// runs as, as in the official image. Without the runner's build there is
// no image, and elasticsearch, which runs on no cluster, has none
// (images.ErrNoLabImage).
func (e Engine) LabImage() (images.Recipe, error) {
	if e.flavor != engine.FlavorOpenSearch {
		return images.Recipe{}, fmt.Errorf("engine %s: %w: it runs on no cluster", e.flavor, images.ErrNoLabImage)
	}
	l, err := e.bundled()
	if err != nil {
		return images.Recipe{}, fmt.Errorf("opensearch image: %w: %w", images.ErrNoLabImage, err)
	}
	libs, err := filepath.Glob(filepath.Join(l.runnerDir, "lib", "*.jar"))
	if err != nil || len(libs) == 0 {
		return images.Recipe{}, fmt.Errorf("opensearch image: no jars in %s/lib: run make setup (it builds java/opensearch)", l.runnerDir)
	}
	sort.Strings(libs)
	r := images.Recipe{
		Name:     RunnerImage,
		Suite:    images.Suite,
		Packages: []string{"openjdk-17-jre-headless", "curl"},
		Hooks:    []string{images.AddUserHook("opensearch", podUID, "/tmp")},
		Config:   images.Config{Env: []string{"PATH=" + images.StdPath}, User: strconv.Itoa(podUID), WorkingDir: "/tmp"},
	}
	add := func(src, dst string) error {
		b, err := os.ReadFile(src)
		if err != nil {
			return fmt.Errorf("opensearch image: %w", err)
		}
		r.Files = append(r.Files, images.File{Path: dst, Mode: 0o644, Data: b})
		return nil
	}
	if err := add(filepath.Join(l.runnerDir, jarName), RunnerPodDir+"/"+jarName); err != nil {
		return images.Recipe{}, err
	}
	for _, lib := range libs {
		if err := add(lib, RunnerPodDir+"/lib/"+filepath.Base(lib)); err != nil {
			return images.Recipe{}, err
		}
	}
	return r, nil
}
