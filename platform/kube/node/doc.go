// Package node runs a single-node Kubernetes cluster on this machine
// from real parts, for `tierbench cluster up`: users who want to try a
// cluster study on one host, and the tests that run every engine in real
// pods. One process (Serve) starts etcd, the control plane, containerd
// with runc, the kubelet, kube-proxy, a CNI bridge and a small cluster DNS
// (dns.go), provisions the study's tiers with package tier and serves
// each as a storage class of local volumes it recycles (volumes.go).
//
// Everything the node makes is undone by one sweep (host.go), from one
// ledger record written before anything starts: by Serve when it ends
// (cluster down), and by `tierbench cleanup` after a kill -9. The record
// lists what was there before, so that the sweep removes only what the
// node made. The kubelet's ports and fixed folders are the machine's, so
// one node runs per machine (a lock under /run).
package node
