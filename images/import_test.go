package images_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/images"
	"github.com/tierbench/tierbench/images/imagestest"
)

func TestImport(t *testing.T) {
	ctr := imagestest.Containerd(t)
	ctx := context.Background()
	r := images.FilesRecipe()
	path, err := images.Build(ctx, r, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if has, err := ctr.Has(ctx, r.Name); err != nil || has {
		t.Fatalf("Has before Import: %v, %v", has, err)
	}
	if err := ctr.Import(ctx, path); err != nil {
		t.Fatal(err)
	}
	if has, err := ctr.Has(ctx, r.Name); err != nil || !has {
		t.Fatalf("Has after Import: %v, %v", has, err)
	}
	if has, err := ctr.Has(ctx, "tierbench.local/filestest"); err != nil || has {
		t.Errorf("Has of another name: %v, %v", has, err)
	}
	// Unpacked for overlayfs: a one-layer image's snapshot is named by
	// its layer's diff id.
	if _, err := ctr.Run(ctx, "snapshots", "--snapshotter", "overlayfs", "info", images.LayerDiffID(t, path)); err != nil {
		t.Errorf("no overlayfs snapshot of the layer: %v", err)
	}
	// Importing again is harmless (cluster up imports at every start).
	if err := ctr.Import(ctx, path); err != nil {
		t.Errorf("second Import: %v", err)
	}
	if err := ctr.Import(ctx, filepath.Join(t.TempDir(), "none.tar")); err == nil || !strings.Contains(err.Error(), "none.tar") {
		t.Errorf("Import of a missing tarball: %v", err)
	}
}
