// Package images makes the container images that `tierbench cluster up`
// runs on its single-node cluster, where there is no registry to pull
// from: a Recipe (Debian packages through mmdebstrap, and files) is
// built once per machine into a docker-archive tarball in a cache
// folder, and the tarball is imported into the node's containerd with
// ctr, so that pods can use it with imagePullPolicy: Never.
//
// The engine recipes (Postgres, Redis, MariaDB) keep the semantics of
// the official images that the pods were written for: the same uid 999,
// the same environment variables and arguments, and a small entrypoint
// that implements the subset of the official one that tierbench uses.
package images
