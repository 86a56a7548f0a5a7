// Package images makes the container images that `tierbench cluster up`
// runs on its single-node cluster, where there is no registry to pull
// from: a Recipe (Debian packages through mmdebstrap, and files) is
// built once per machine into a docker-archive tarball in a cache
// folder, and the tarball is imported into the node's containerd with
// ctr, so that pods find it without a pull (imagePullPolicy IfNotPresent or Never).
//
// The engine recipes keep the semantics of the official images the pods
// were written for: the same uids, variables and arguments, and for
// Postgres, Redis and MariaDB a small entrypoint that implements the
// subset of the official one tierbench uses. Ignite's and OpenSearch's
// hold Java and this machine's builds of their launchers.
package images
