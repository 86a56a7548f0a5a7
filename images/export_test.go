package images

import "testing"

// What the external tests (package images_test, which use imagestest,
// itself an importer of this package) need of the internal ones.

// FilesRecipe is a small image of files only.
var FilesRecipe = filesRecipe

// LayerDiffID is the diff id of the one layer of the docker archive at
// path, which names its snapshot in containerd.
func LayerDiffID(t *testing.T, path string) string {
	t.Helper()
	return readArchive(t, path).config.RootFS.DiffIDs[0]
}
