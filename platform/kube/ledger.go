package kube

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tierbench/tierbench/tier"
)

// goneTimeout is how long removal waits for a run's objects to go (pods
// end their containers; claims wait for their pods).
const goneTimeout = 2 * time.Minute

// Ref says how to reach a cluster again (the ledger keeps it, so
// cleanup after a kill -9 finds the cluster).
type Ref = tier.KubeRef

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
	r, err := l.Intend(tier.Resource{Kind: tier.KindKubeObjects, Path: selector, Kube: &ref})
	if err != nil {
		return nil, err
	}
	return func() error { return l.Done(r) }, nil
}

// Undoers undo the ledger kinds this package records (see
// tier.Ledger.Undoers): a killed run's objects, by their labels.
func Undoers() map[string]func(tier.Resource) error {
	return map[string]func(tier.Resource) error{tier.KindKubeObjects: undo}
}

func undo(r tier.Resource) error {
	if r.Kube == nil {
		return fmt.Errorf("%s: the record does not say which cluster", r)
	}
	c, err := Connect(r.Kube.Kubeconfig, r.Kube.Context)
	if err != nil {
		return fmt.Errorf("%s: %w", r, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), goneTimeout+30*time.Second)
	defer cancel()
	if err := c.Remove(ctx, r.Kube.Namespace, r.Path); err != nil {
		return fmt.Errorf("%s: %w", r, err)
	}
	return nil
}
