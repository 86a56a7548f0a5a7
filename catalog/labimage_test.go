package catalog

import (
	"errors"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/images"
)

// TestLabImages checks what cluster up asks of the catalog's engines:
// every engine that runs on a cluster declares the image of the lab node
// (images.LabImager), which is made here or says why not with
// images.ErrNoLabImage, under a name of its own in tierbench.local, and no
// engine takes a name the node gives tierbench's own images.
func TestLabImages(t *testing.T) {
	c := Default()
	refs := map[string]string{}
	for _, name := range c.EngineNames() {
		e, _ := c.Engine(name)
		li, ok := e.(images.LabImager)
		if _, runsInPods := e.(engine.Containerizer); runsInPods && !ok {
			t.Errorf("engine %s runs on a cluster but has no image for the lab node: give it a LabImage (images.LabImager)", name)
		}
		if name == "pause" || name == "tierbench" {
			t.Errorf("engine %s has the name of one of tierbench's own images on the lab node", name)
		}
		if !ok {
			continue
		}
		r, err := li.LabImage()
		if errors.Is(err, images.ErrNoLabImage) {
			t.Logf("%s: %v", name, err)
			continue
		}
		if err != nil {
			t.Errorf("engine %s: LabImage: %v", name, err)
			continue
		}
		if !strings.HasPrefix(r.Name, "tierbench.local/") {
			t.Errorf("engine %s: lab image %q is not in tierbench.local/, where no pull is attempted", name, r.Name)
		}
		if other, dup := refs[r.Name]; dup {
			t.Errorf("engines %s and %s have the same lab image %s", other, name, r.Name)
		}
		refs[r.Name] = name
	}
}

// TestLabImagesWithoutJavaBuilds checks that an engine whose image holds
// this machine's Java build (Ignite's launcher, the OpenSearch runner)
// says, where there is none, that it has no image (the node goes on
// without it) rather than failing cluster up, and that the other engines'
// images do not depend on a build.
func TestLabImagesWithoutJavaBuilds(t *testing.T) {
	t.Chdir(t.TempDir()) // no java/*/target above it
	t.Setenv("TIERBENCH_IGNITE_DIR", "")
	t.Setenv("TIERBENCH_OPENSEARCH_DIR", "")
	c := Default()
	for _, tc := range []struct {
		engine string
		made   bool
	}{{"postgres", true}, {"mariadb", true}, {"redis", true}, {"ignite", false}, {"opensearch", false}, {"elasticsearch", false}} {
		e, _ := c.Engine(tc.engine)
		li, ok := e.(images.LabImager)
		if !ok {
			t.Errorf("engine %s has no LabImage", tc.engine)
			continue
		}
		_, err := li.LabImage()
		switch {
		case tc.made && err != nil:
			t.Errorf("engine %s: %v; want its image, which needs no build", tc.engine, err)
		case !tc.made && !errors.Is(err, images.ErrNoLabImage):
			t.Errorf("engine %s: %v; want images.ErrNoLabImage", tc.engine, err)
		}
	}
}
