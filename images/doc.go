// Package images makes the container images that `tierbench cluster up`
// runs on its single-node cluster, where there is no registry to pull
// from: a Recipe (Debian packages through mmdebstrap, and files) is
// built once per machine into a docker-archive tarball in a cache
// folder, and the tarball is imported into the node's containerd with
// ctr, so that pods find it without a pull (imagePullPolicy IfNotPresent or Never).
//
// The engines' images are the engines' own: each engine that runs on
// the node declares its recipe (LabImager, in engine/<name>/image.go),
// which keeps the semantics of the official image its pods were written
// for: the same uids, variables and arguments, and for Postgres, Redis
// and MariaDB a small entrypoint that implements the subset of the
// official one tierbench uses; Ignite's and OpenSearch's hold Java and
// this machine's builds of their launchers. This package holds what
// they share (Suite, StdPath, the user hooks) and the images that are
// tierbench's own (Pause, Tierbench). It imports nothing of tierbench's
// but the host kit, so that engines may import it.
package images
