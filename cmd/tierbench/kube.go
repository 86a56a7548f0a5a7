package main

import (
	"context"

	"github.com/tierbench/tierbench/platform/kube"
	"github.com/tierbench/tierbench/study"
)

// checkCluster checks a study on Kubernetes against its cluster: the
// kubeconfig and context work, the namespace and the tiers' storage
// classes exist. nil for a study on this machine. What run would find
// missing there, validate reports (exit 2).
func checkCluster(ctx context.Context, st *study.Study) error {
	k := st.Kubernetes
	if k == nil {
		return nil
	}
	var probs study.Problems
	add := func(msg string) { probs = append(probs, study.Problem{File: st.File, Line: k.Line, Msg: msg}) }
	c, err := kube.Connect(k.Kubeconfig, k.Context)
	if err != nil {
		add("platform kubernetes: " + err.Error())
		return probs
	}
	if err := c.Check(ctx, k.Namespace, st.StorageClasses()); err != nil {
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
			add(e.Error())
		}
	}
	if len(probs) == 0 {
		return nil
	}
	return probs
}
