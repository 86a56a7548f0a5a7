// Package images makes the container images that `tierbench cluster up`
// runs on its single-node cluster, where there is no registry to pull
// from: a Recipe (Debian packages through mmdebstrap, and files) is
// built once per machine into a docker-archive tarball in a cache
// folder, and the tarball is imported into the node's containerd with
// ctr, so that pods find it without a pull (imagePullPolicy IfNotPresent or Never).
//
// The engine recipes (Postgres, Redis, MariaDB; Ignite and OpenSearch on Java) keep the semantics of
// the official images that the pods were written for: the same uid 999,
// the same environment variables and arguments, and a small entrypoint
// that implements the subset of the official one that tierbench uses.
package images
