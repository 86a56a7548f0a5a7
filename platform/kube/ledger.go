package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/tierbench/tierbench/tier"
)

// goneTimeout is how long removal waits for a run's objects to go (pods
// end their containers; claims wait for their pods).
const goneTimeout = 2 * time.Minute

// KindObjects is the ledger kind of a run's objects on a cluster: Path is
// their label selector, the record's Extra its Ref (with the namespace).
// This package registers how cleanup undoes and names it.
const KindObjects = "kube-objects"

func init() {
	tier.RegisterKind(KindObjects, tier.KindFuncs{Undo: undo, Describe: describe})
}

// Ref says how to reach a cluster again, and the namespace of a run's
// objects: the ledger keeps it (as a record's Extra, in this JSON), so
// cleanup after a kill -9 finds the cluster.
type Ref struct {
	Kubeconfig string `json:"kubeconfig,omitempty"`
	Context    string `json:"context,omitempty"`
	Namespace  string `json:"namespace"`
}

// refOf reads the Ref of a KindObjects record, nil if it has none.
func refOf(r tier.Resource) (*Ref, error) {
	if len(r.Extra) == 0 || string(r.Extra) == "null" {
		return nil, nil
	}
	var ref Ref
	if err := json.Unmarshal(r.Extra, &ref); err != nil {
		return nil, fmt.Errorf("%s %s: its cluster reference: %w", r.Kind, r.Path, err)
	}
	return &ref, nil
}

// Remove deletes every object selector matches in namespace ns and waits
// until they are gone; an error names what is left.
func (c *Cluster) Remove(ctx context.Context, ns, selector string) error {
	if err := c.Delete(ctx, ns, selector); err != nil {
		return err
	}
	left, err := c.WaitGone(ctx, ns, selector, goneTimeout)
	if err != nil {
		return err
	}
	if len(left) > 0 {
		names := make([]string, len(left))
		for i, f := range left {
			names[i] = f.String()
		}
		return fmt.Errorf("objects of %s still on the cluster of %s after %s: %s (their finalizers wait for a controller; kubectl describe says which)",
			selector, c.Where, goneTimeout, strings.Join(names, ", "))
	}
	return nil
}

// Record writes the objects selector will match to the ledger before
// they are created, so cleanup removes them after a kill -9; done
// forgets them once removed.
func (c *Cluster) Record(l *tier.Ledger, ns, selector string) (done func() error, err error) {
	if l == nil {
		return func() error { return nil }, nil
	}
	ref := c.ref
	ref.Namespace = ns
	extra, err := json.Marshal(ref)
	if err != nil {
		return nil, err
	}
	r, err := l.Intend(tier.Resource{Kind: KindObjects, Path: selector, Extra: extra})
	if err != nil {
		return nil, err
	}
	return func() error { return l.Done(r) }, nil
}

// undo removes a killed run's objects, by their labels.
func undo(r tier.Resource) error {
	ref, err := refOf(r)
	if err != nil {
		return err
	}
	if ref == nil {
		return fmt.Errorf("%s: the record does not say which cluster", r)
	}
	c, err := Connect(ref.Kubeconfig, ref.Context)
	if err != nil {
		return fmt.Errorf("%s: %w", r, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), goneTimeout+30*time.Second)
	defer cancel()
	if err := c.Remove(ctx, ref.Namespace, r.Path); err != nil {
		return fmt.Errorf("%s: %w", r, err)
	}
	return nil
}

// describe names a KindObjects record for cleanup's output.
func describe(r tier.Resource) string {
	ref, err := refOf(r)
	if err != nil || ref == nil {
		return r.Kind + " " + r.Path
	}
	name := ref.Context
	if name == "" {
		name = "current"
	}
	return fmt.Sprintf("Kubernetes objects %s in namespace %s (context %s)", r.Path, ref.Namespace, name)
}
