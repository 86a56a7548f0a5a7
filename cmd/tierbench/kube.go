package main

import (
	"context"

	"github.com/tierbench/tierbench/platform/kube"
	"github.com/tierbench/tierbench/study"
)

// checkCluster checks a study on Kubernetes against its cluster (the
// kubeconfig and context work, and the tiers' storage classes exist) and
// refuses it after that: running a study on a cluster is not built yet,
// and what run refuses, validate refuses. nil for a study on this machine.
func checkCluster(ctx context.Context, st *study.Study) error {
	k := st.Kubernetes
	if k == nil {
		return nil
	}
	var probs study.Problems
	add := func(line int, msg string) { probs = append(probs, study.Problem{File: st.File, Line: line, Msg: msg}) }
	c, err := kube.Connect(k.Kubeconfig, k.Context)
	if err != nil {
		add(k.Line, "platform kubernetes: "+err.Error())
	} else {
		classes := map[string]string{}
		for _, t := range st.Tiers {
			if t.StorageClass != nil {
				classes[t.Name] = t.StorageClass.Class
			}
		}
		if err := c.CheckClasses(ctx, classes); err != nil {
			add(k.Line, err.Error())
		}
	}
	add(k.Line, "platform kubernetes: running a study on a cluster is not built yet (the cluster and its storage classes were checked); run the study on this machine, or drive a server on the cluster with tierbench drive")
	return probs
}
