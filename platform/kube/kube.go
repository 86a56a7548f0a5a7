// Package kube is tierbench's side of a Kubernetes cluster (platform:
// kubernetes): it connects as kubectl does (a kubeconfig file and one of
// its contexts), checks that the study's tiers, the cluster's storage
// classes, exist, and makes and removes a run's objects (objects.go: a
// claim per placed component, the engine's pod, Service and
// NetworkPolicy, the load generator's Job), labelled with the study and
// run and owned by the run's ConfigMap. It speaks the API's JSON over
// client-go's authenticated HTTP client: the typed clients would link
// every API group's types for the few fields tierbench writes and reads.
package kube

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Cluster is a connection to one cluster's API server.
type Cluster struct {
	cfg  *rest.Config
	http *http.Client // authenticated as the kubeconfig says
	// Where says which cluster, for messages: the context and server.
	Where string
	ref   Ref
}

// Connect reads the kubeconfig (empty: $KUBECONFIG, then ~/.kube/config)
// and uses context (empty: its current one).
func Connect(kubeconfig, context string) (*Cluster, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		// As a shell would: ~ is the home folder. Absolute, so that the
		// ledger's record reaches the cluster from any folder.
		if rest, ok := strings.CutPrefix(kubeconfig, "~/"); ok {
			if home, err := os.UserHomeDir(); err == nil {
				kubeconfig = filepath.Join(home, rest)
			}
		}
		if abs, err := filepath.Abs(kubeconfig); err == nil {
			kubeconfig = abs
		}
		rules.ExplicitPath = kubeconfig
		if err := checkKubeconfig(kubeconfig); err != nil {
			return nil, err
		}
	}
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context})
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	raw, err := loader.RawConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	name := context
	if name == "" {
		name = raw.CurrentContext
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client for %s: %w", cfg.Host, err)
	}
	return &Cluster{cfg: cfg, http: hc, Where: fmt.Sprintf("context %q (%s)", name, cfg.Host),
		ref: Ref{Kubeconfig: kubeconfig, Context: context}}, nil
}

// checkKubeconfig refuses a file that is not a kubeconfig in one line,
// rather than with client-go's decoding error (a JSON parse error for a
// YAML file of another kind).
func checkKubeconfig(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	if cfg, err := clientcmd.Load(data); err != nil || len(cfg.Clusters) == 0 {
		return fmt.Errorf("kubeconfig %s is not a kubeconfig file (apiVersion: v1, kind: Config, with clusters, users and contexts); give the file kubectl uses, e.g. ~/.kube/config", path)
	}
	return nil
}

// MissingClassesError names the storage classes a study needs that the
// cluster does not have, and those it has.
type MissingClassesError struct {
	Where   string
	Missing []string // "tier pmem: local-pmem"
	Have    []string
}

func (e *MissingClassesError) Error() string {
	have := "none"
	if len(e.Have) > 0 {
		have = strings.Join(e.Have, ", ")
	}
	return fmt.Sprintf("the cluster of %s has no storage class for %s; it has: %s. Fix the tier's storage_class or create the class",
		e.Where, strings.Join(e.Missing, "; "), have)
}

// CheckClasses checks that every tier's storage class (tier name → class)
// exists on the cluster; a *MissingClassesError says which do not.
func (c *Cluster) CheckClasses(ctx context.Context, classes map[string]string) error {
	var list struct {
		Items []struct {
			Metadata struct{ Name string }
		}
	}
	if err := c.get(ctx, "/apis/storage.k8s.io/v1/storageclasses", &list); err != nil {
		return fmt.Errorf("list the storage classes of the cluster of %s: %w", c.Where, err)
	}
	have := map[string]bool{}
	var names []string
	for _, sc := range list.Items {
		have[sc.Metadata.Name] = true
		names = append(names, sc.Metadata.Name)
	}
	sort.Strings(names)
	var missing []string
	tiers := make([]string, 0, len(classes))
	for t := range classes {
		tiers = append(tiers, t)
	}
	sort.Strings(tiers)
	for _, t := range tiers {
		if !have[classes[t]] {
			missing = append(missing, fmt.Sprintf("tier %s: %s", t, classes[t]))
		}
	}
	if len(missing) > 0 {
		return &MissingClassesError{Where: c.Where, Missing: missing, Have: names}
	}
	return nil
}

// Check checks that namespace ns and every tier's storage class (tier
// name -> class) exist on the cluster: what a study on it needs before
// anything is created. Each problem is one error of the join.
func (c *Cluster) Check(ctx context.Context, ns string, classes map[string]string) error {
	return errors.Join(c.Namespace(ctx, ns), c.CheckClasses(ctx, classes))
}
