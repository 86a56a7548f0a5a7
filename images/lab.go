package images

import "errors"

// LabImager is an optional Engine ability of an engine that runs on the
// lab node (`tierbench cluster up`, which has no registry to pull its
// official image from): LabImage is the recipe of the image the node
// builds and imports for it, which a study on that node runs unless it
// names its own. The engine declares it beside its Container, so that
// the catalog stays the one list of engines; it is declared here rather
// than in package engine so that engine imports no image code.
//
// Asked by cmd/tierbench's cluster up, once per catalog engine, before
// the node starts; the node names the image after the engine.
type LabImager interface {
	// LabImage returns an error wrapping ErrNoLabImage when this
	// machine cannot make the image (the engine's Java build is
	// missing) or the engine has none: the node then goes on without
	// it. Any other error stops cluster up.
	LabImage() (Recipe, error)
}

// ErrNoLabImage is what LabImage wraps when the engine has no image on
// this machine's lab node: the node is made without it, and cluster up
// lists the images it has.
var ErrNoLabImage = errors.New("no lab image")
