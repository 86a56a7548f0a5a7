#!/usr/bin/env bash
# Builds Kubernetes for the tests of platform: kubernetes and for
# tierbench cluster up (kube-apiserver, kube-controller-manager,
# kube-scheduler, kubelet, kube-proxy and kubectl from k8s.io/kubernetes,
# and kwok to fake nodes and pods), once per machine, into $1. etcd,
# containerd and runc come from Debian.
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
dest="${1:?usage: kube-build.sh DEST [BINARY...]}"
shift
# The binaries to build: those named, or all. Pods need the scheduler to
# be placed and kwok (fake nodes) or the kubelet (a real node) to run;
# Jobs and claims need the controller manager; Services kube-proxy.
want=("$@")
[ "${#want[@]}" -gt 0 ] || want=(kube-apiserver kube-controller-manager kube-scheduler kwok kubelet kube-proxy kubectl)
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
if [ "${#missing[@]}" -eq 0 ]; then
	[[ " ${want[*]} " != *" kwok "* ]] || copy_stages
	exit 0
fi

staging=(api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider
	cluster-bootstrap code-generator component-base component-helpers controller-manager cri-api
	cri-client csi-translation-lib dynamic-resource-allocation endpointslice externaljwt kms
	kube-aggregator kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics
	mount-utils pod-security-admission sample-apiserver sample-cli-plugin sample-controller)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$dest"

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
