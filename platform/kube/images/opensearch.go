package images

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// OpenSearch is the image the opensearch engine's pod runs its node in
// on a node of cluster up: Debian's Java 17, curl (the readiness probe)
// and this machine's build of the OpenSearch runner (runnerDir: jar
// and lib/, OpenSearch 2.19 from Maven Central; its distribution is not
// there), and a user of uid 1000, which the pod runs as, as in the
// official image. name, jar and dest (where the image keeps the runner)
// are the engine's: search.RunnerImage, RunnerJar and RunnerPodDir.
func OpenSearch(name, runnerDir, jar, dest string) (Recipe, error) {
	libs, err := filepath.Glob(filepath.Join(runnerDir, "lib", "*.jar"))
	if err != nil || len(libs) == 0 {
		return Recipe{}, fmt.Errorf("opensearch image: no jars in %s/lib: run make setup (it builds java/opensearch)", runnerDir)
	}
	sort.Strings(libs)
	r := Recipe{
		Name:     name,
		Suite:    Suite,
		Packages: []string{"openjdk-17-jre-headless", "curl"},
		Hooks:    []string{addUserHook("opensearch", 1000, "/tmp")},
		Config:   Config{Env: []string{"PATH=" + StdPath}, User: "1000", WorkingDir: "/tmp"},
	}
	add := func(src, dst string) error {
		b, err := os.ReadFile(src)
		if err != nil {
			return fmt.Errorf("opensearch image: %w", err)
		}
		r.Files = append(r.Files, File{Path: dst, Mode: 0o644, Data: b})
		return nil
	}
	if err := add(filepath.Join(runnerDir, jar), dest+"/"+jar); err != nil {
		return Recipe{}, err
	}
	for _, l := range libs {
		if err := add(l, dest+"/lib/"+filepath.Base(l)); err != nil {
			return Recipe{}, err
		}
	}
	return r, nil
}
