#!/usr/bin/env bash
# Builds Kubernetes for the tests of platform: kubernetes and for
# tierbench cluster up (kube-apiserver, kube-controller-manager,
# kube-scheduler, kubelet, kube-proxy and kubectl from k8s.io/kubernetes,
# and kwok to fake nodes and pods, and etcd 3.6), once per machine, into
# $1. containerd and runc come from Debian. etcd is built because
# Debian's etcd-server is 3.4, without the watch progress notifications
# the API server needs to serve lists and watch-list streams from its
# cache: with 3.6 the Kubernetes tests' pods show in seconds less
# (platform/kube's tests took 30 s instead of 66 s); Debian's etcd stays
# the fallback (node.Etcd).
#
# k8s.io/kubernetes is not meant to be a dependency: its go.mod replaces
# its 31 staging modules with folders of its own repository, which a module
# download does not have. The throwaway module below requires it and
# replaces each staging module with its published v0.x release instead.
# The first build takes about 16 minutes on 2 cores (empty Go caches,
# downloads included); later runs find the
# binaries and return at once.
set -euo pipefail

k8s_version=1.34.1
staging_version=0.34.1
kwok_version=0.8.0
etcd_version=3.6.16
dest="${1:?usage: kube-build.sh DEST [BINARY...]}"
shift
# The binaries to build: those named, or all. Pods need the scheduler to
# be placed and kwok (fake nodes) or the kubelet (a real node) to run;
# Jobs and claims need the controller manager; Services kube-proxy.
want=("$@")
[ "${#want[@]}" -gt 0 ] || want=(kube-apiserver kube-controller-manager kube-scheduler kwok kubelet kube-proxy kubectl etcd)
# kwok's own stage definitions (node and pod "fast": nodes Ready, pods
# Running and Ready, Job pods Succeeded, deleted pods gone), from the
# module kwok is built from, for the tests' kwok to load.
copy_stages() {
	[ -d "$dest/kwok-stages" ] && return
	local mod
	mod="$(go env GOMODCACHE)/sigs.k8s.io/kwok@v$kwok_version/kustomize/stage"
	if [ ! -d "$mod" ]; then
		GOFLAGS=-mod=mod go mod download -x "sigs.k8s.io/kwok@v$kwok_version" >/dev/null 2>&1 || true
	fi
	mkdir -p "$dest/kwok-stages.tmp"
	cp "$mod"/node/fast/node-initialize.yaml "$mod"/node/heartbeat/node-heartbeat.yaml "$mod"/pod/fast/pod-*.yaml "$dest/kwok-stages.tmp/"
	mv "$dest/kwok-stages.tmp" "$dest/kwok-stages"
}
missing=()
for b in "${want[@]}"; do
	[ -x "$dest/$b" ] || missing+=("$b")
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$dest"

# etcd first, in a throwaway module of its own: etcd's server module is
# its main package, and its dependencies are not Kubernetes'.
if [[ " ${missing[*]} " == *" etcd "* ]]; then
	echo "setup: building etcd $etcd_version into $dest (about 2 minutes, once)"
	mkdir -p "$work/etcd"
	printf 'module tierbench.local/etcdbuild\n\ngo 1.24\n\nrequire go.etcd.io/etcd/server/v3 v%s\n' "$etcd_version" >"$work/etcd/go.mod"
	printf '//go:build tools\n\npackage etcdbuild\n\nimport _ "go.etcd.io/etcd/server/v3"\n' >"$work/etcd/tools.go"
	(cd "$work/etcd" && export CGO_ENABLED=0 GOFLAGS=-mod=mod && { go mod tidy -e >/dev/null 2>&1 || true; } &&
		go build -trimpath -o "$dest/etcd.tmp" go.etcd.io/etcd/server/v3)
	mv "$dest/etcd.tmp" "$dest/etcd"
	echo "built $dest/etcd"
	rest=()
	for b in "${missing[@]}"; do [ "$b" = etcd ] || rest+=("$b"); done
	missing=("${rest[@]+"${rest[@]}"}")
fi
if [ "${#missing[@]}" -eq 0 ]; then
	[[ " ${want[*]} " != *" kwok "* ]] || copy_stages
	exit 0
fi

staging=(api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider
	cluster-bootstrap code-generator component-base component-helpers controller-manager cri-api
	cri-client csi-translation-lib dynamic-resource-allocation endpointslice externaljwt kms
	kube-aggregator kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics
	mount-utils pod-security-admission sample-apiserver sample-cli-plugin sample-controller)

echo "setup: building the Kubernetes control plane for the tests (${missing[*]}) into $dest; this takes 20-40 minutes, once"
cd "$work"
{
	echo "module tierbench.local/kubebuild"
	echo
	echo "go 1.24"
	echo
	echo "require k8s.io/kubernetes v$k8s_version"
	for m in "${staging[@]}"; do
		echo "replace k8s.io/$m => k8s.io/$m v$staging_version"
	done
} >go.mod
cat >tools.go <<'EOF'
//go:build tools

package kubebuild

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
EOF
export CGO_ENABLED=0 GOFLAGS=-mod=mod
go mod tidy -e >/dev/null 2>&1 || true
for b in "${missing[@]}"; do
	case "$b" in
	kwok)
		GOBIN="$work/bin" go install "sigs.k8s.io/kwok/cmd/kwok@v$kwok_version"
		install -m 0755 "$work/bin/kwok" "$dest/kwok.tmp"
		copy_stages
		;;
	*)
		go build -trimpath -o "$dest/$b.tmp" "k8s.io/kubernetes/cmd/$b"
		;;
	esac
	mv "$dest/$b.tmp" "$dest/$b"
	echo "built $dest/$b"
done
