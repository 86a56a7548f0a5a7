package kube

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
)

// pod is the part of a Pod's spec and status tierbench reads.
type pod struct {
	Metadata struct{ Name, Namespace string }
	Spec     struct {
		NodeName   string
		Containers []struct {
			Name      string
			Resources struct {
				Limits map[string]string
			}
		}
	}
	Status struct {
		Phase string
		// Reason and Message say why a pod failed as a whole: Evicted,
		// with the resource the node ran short of.
		Reason, Message string
		Conditions      []struct {
			Type, Status, Reason, Message string
			LastTransitionTime            time.Time
		}
		ContainerStatuses []struct {
			Name         string
			Image        string
			RestartCount int
			State        containerState
			LastState    containerState
		}
	}
}

// containerState is where a container is, or was last.
type containerState struct {
	Waiting *struct {
		Reason, Message string
	}
	Terminated *termination
}

// termination is how a container ended: its exit code (128+N when a
// signal N ended it), the signal when the runtime says, and the kubelet's
// reason (Completed, Error, OOMKilled, ...).
type termination struct {
	ExitCode        int
	Signal          int
	Reason, Message string
}

func (p *pod) condition(typ string) (status, why string) {
	for _, c := range p.Status.Conditions {
		if c.Type == typ {
			return c.Status, strings.TrimSpace(c.Reason + " " + c.Message)
		}
	}
	return "", ""
}

func (p *pod) ended() bool { return p.Status.Phase == "Succeeded" || p.Status.Phase == "Failed" }

// describe says where the pod is, for an error: its phase, why it is not
// scheduled, and what its containers wait for or ended with.
func (p *pod) describe() string {
	parts := []string{"phase " + orNone(p.Status.Phase)}
	if st, why := p.condition("PodScheduled"); st == "False" {
		parts = append(parts, "not scheduled: "+why)
	}
	if p.Spec.NodeName != "" {
		parts = append(parts, "on node "+p.Spec.NodeName)
	}
	for _, c := range p.Status.ContainerStatuses {
		if w := c.State.Waiting; w != nil {
			parts = append(parts, fmt.Sprintf("container %s waiting: %s", c.Name, strings.TrimSpace(w.Reason+" "+w.Message)))
		}
		if t := c.State.Terminated; t != nil {
			parts = append(parts, fmt.Sprintf("container %s ended with %s", c.Name, p.exit(c.Name, *t)))
		}
	}
	if p.Status.Reason != "" {
		parts = append(parts, "pod "+strings.TrimSpace(p.Status.Reason+": "+p.Status.Message))
	}
	return strings.Join(parts, "; ")
}

// exit says how container name ended: its exit code, the kubelet's
// reason, for a kill its likely cause (exitCause), and then its
// termination message (the last lines of its log), which can be long.
func (p *pod) exit(name string, t termination) string {
	s := fmt.Sprintf("exit code %d", t.ExitCode)
	if t.Reason != "" {
		s += ": " + t.Reason
	}
	if cause := exitCause(t, p.memoryLimit(name)); cause != "" {
		s += " (" + cause + ")"
	}
	if msg := strings.TrimSpace(t.Message); msg != "" {
		s += " " + msg
	}
	return s
}

// memoryLimit is container name's memory limit as its spec gives it,
// in bytes made readable when it is a number; "" when it has none.
func (p *pod) memoryLimit(name string) string {
	for _, c := range p.Spec.Containers {
		if c.Name != name {
			continue
		}
		m := c.Resources.Limits["memory"]
		if n, err := strconv.ParseUint(m, 10, 64); err == nil {
			return humanize.IBytes(n)
		}
		return m
	}
	return ""
}

// exitCause explains a container's end by a signal, the way an engine
// under load ends when memory runs out, "" for another end. Exit code
// 137 is 128+9: a SIGKILL, which the kernel's OOM killer sends. The
// kubelet says OOMKilled when the container's own memory cgroup was at
// its limit; a container with no limit of its own is killed when the
// node (or its pods' share of it) runs short, which the kubelet reports
// as a plain Error, and a pod with no memory request is the first the
// kernel picks (BestEffort, oom_score_adj 1000). The kubelet also sends
// SIGKILL once a stop's grace period has passed (an eviction, a
// deletion). tierbench gives its pods a readiness probe and no liveness
// probe, and a readiness probe never stops a container. limit is the
// container's memory limit, "" for none.
func exitCause(t termination, limit string) string {
	switch {
	case t.Reason == "OOMKilled" && limit != "":
		return fmt.Sprintf("the kernel's OOM killer killed it at its memory limit of %s, the study's memory: the engine's memory outgrew it, for a JVM its heap and the direct memory, metaspace, code and threads beside it, with the page cache charged to the same limit; raise memory, or lower the engine's heap or caches", limit)
	case t.Reason == "OOMKilled":
		return "the kernel's OOM killer killed it; it had no memory limit, so the node ran short of memory, and a pod without a memory request is the first the kernel kills; give the study a memory setting, which the pod then asks for and is held to"
	case t.ExitCode == 137 || t.Signal == 9:
		cause := "killed by SIGKILL (128+9), not at a memory limit of its own: the node's OOM killer (its kernel log says so), the kubelet ending a stop after its grace period (an eviction: the pod's status says so), or someone's kill"
		if limit == "" {
			cause += "; it had no memory limit, and a pod without a memory request is the first the kernel's OOM killer picks when the node runs short: give the study a memory setting"
		}
		return cause
	case t.ExitCode == 143 || t.Signal == 15:
		return "stopped by SIGTERM (128+15): its pod was deleted or evicted"
	}
	return ""
}

// unschedulableGrace is how long the scheduler may find no node for a
// pod before tierbench gives up on it: a claim bound a moment late makes
// a pod unschedulable for that moment.
const unschedulableGrace = 20 * time.Second

// cannotStart says why the pod will not start without someone's help,
// with the kubelet's or the scheduler's reason and the fix, or "" while
// it still may: its image cannot be pulled, its container keeps crashing
// or cannot be made, or no node has taken it for unschedulableGrace.
// Waiting for any of these to pass would only wait for the timeout.
func (p *pod) cannotStart(now time.Time) string {
	for _, c := range p.Status.ContainerStatuses {
		w := c.State.Waiting
		if w == nil {
			continue
		}
		why := strings.TrimSpace(w.Reason + ": " + w.Message)
		switch w.Reason {
		case "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName":
			return fmt.Sprintf("container %s's image %s cannot be pulled (%s); give the study's platform.kubernetes engine_image (or image, for the load generator) an image the cluster can pull: on a node of tierbench cluster up, the images it built, which it prints", c.Name, c.Image, why)
		case "CrashLoopBackOff":
			last := ""
			if t := c.LastState.Terminated; t != nil {
				last = ", last with " + p.exit(c.Name, *t)
			}
			return fmt.Sprintf("container %s keeps crashing (restarted %d times%s); read why with kubectl logs --previous -n %s %s -c %s", c.Name, c.RestartCount, last, p.Metadata.Namespace, p.Metadata.Name, c.Name)
		case "CreateContainerConfigError", "CreateContainerError", "RunContainerError":
			return fmt.Sprintf("container %s cannot be made (%s); check what the study gives it (image, volumes, secrets)", c.Name, why)
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == "PodScheduled" && c.Status == "False" && c.Reason == "Unschedulable" && !c.LastTransitionTime.IsZero() && now.Sub(c.LastTransitionTime) >= unschedulableGrace {
			return fmt.Sprintf("no node has taken it for %s (%s); free what it asks for on the cluster's nodes, or ask for less (the study's volume_size, the engine's memory)", now.Sub(c.LastTransitionTime).Round(time.Second), strings.TrimSpace(c.Message))
		}
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "(none yet)"
	}
	return s
}

// errTimedOut is poll's answer when its time ran out.
var errTimedOut = errors.New("timed out")

// poll calls try every interval until it is done or fails, ctx ends
// (ctx.Err()) or timeout passes (errTimedOut), each after one last try.
func poll(ctx context.Context, timeout, interval time.Duration, try func() (done bool, err error)) error {
	deadline := time.Now().Add(timeout)
	for {
		if done, err := try(); done || err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return errTimedOut
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}

// waitPod polls pod name until done says so or timeout passes.
func (c *Cluster) waitPod(ctx context.Context, ns, name, what string, timeout time.Duration, done func(*pod) (bool, error)) (*pod, error) {
	var p pod
	err := poll(ctx, timeout, time.Second, func() (bool, error) {
		p = pod{}
		if err := c.Get(ctx, ns, "Pod", name, &p); err != nil {
			return false, ignoreNotFound(err)
		}
		if why := p.cannotStart(time.Now()); why != "" {
			return false, fmt.Errorf("pod %s cannot start: %s", name, why)
		}
		return done(&p)
	})
	if errors.Is(err, errTimedOut) {
		err = fmt.Errorf("pod %s is not %s after %s: %s", name, what, timeout, p.describe())
	}
	return &p, err
}

func ignoreNotFound(err error) error {
	if IsNotFound(err) {
		return nil
	}
	return err
}

// WaitReady waits until the pod passes its readiness probe; a pod that
// ended first is an error naming its containers' exit.
func (c *Cluster) WaitReady(ctx context.Context, ns, name string, timeout time.Duration) (node string, err error) {
	p, err := c.waitPod(ctx, ns, name, "ready", timeout, func(p *pod) (bool, error) {
		if p.ended() {
			return false, fmt.Errorf("pod %s ended before it was ready: %s", name, p.describe())
		}
		st, _ := p.condition("Ready")
		return st == "True", nil
	})
	if p != nil {
		node = p.Spec.NodeName
	}
	return node, err
}

// WaitStarted waits until the pod's containers have started (or ended),
// so its log can be read, and returns its node.
func (c *Cluster) WaitStarted(ctx context.Context, ns, name string, timeout time.Duration) (node string, err error) {
	p, err := c.waitPod(ctx, ns, name, "started", timeout, func(p *pod) (bool, error) {
		return p.Status.Phase == "Running" || p.ended(), nil
	})
	if p != nil {
		node = p.Spec.NodeName
	}
	return node, err
}

// WaitEnded waits until the pod has ended, and returns an error unless it
// succeeded.
func (c *Cluster) WaitEnded(ctx context.Context, ns, name string, timeout time.Duration) error {
	p, err := c.waitPod(ctx, ns, name, "finished", timeout, func(p *pod) (bool, error) { return p.ended(), nil })
	if err != nil {
		return err
	}
	if p.Status.Phase != "Succeeded" {
		return fmt.Errorf("pod %s failed: %s", name, p.describe())
	}
	return nil
}

// PodOf waits until a pod matches selector (a Job's, once its controller
// made it) and returns its name.
func (c *Cluster) PodOf(ctx context.Context, ns, selector string, timeout time.Duration) (string, error) {
	var name string
	err := poll(ctx, timeout, time.Second, func() (bool, error) {
		var list struct{ Items []pod }
		if err := c.get(ctx, "/api/v1/namespaces/"+ns+"/pods?labelSelector="+url.QueryEscape(selector), &list); err != nil {
			return false, err
		}
		if len(list.Items) > 0 {
			name = list.Items[0].Metadata.Name
		}
		return name != "", nil
	})
	if errors.Is(err, errTimedOut) {
		err = fmt.Errorf("no pod matches %s after %s (does the cluster run the Job controller?)", selector, timeout)
	}
	return name, err
}

// Down says which of the engine's pods went down during a run, each
// with its cause: evicted, a container that ended (a Pod is never
// restarted: its engine's end is the run's), or one that was restarted
// (a StatefulSet's pods are), quoting how it last ended; nil when none
// did. A load generator that fails because its engine was killed fails
// for the engine's reason, which only the engine's pod status tells.
func (c *Cluster) Down(ctx context.Context, ns string, names []string) error {
	var errs []error
	for _, name := range names {
		var p pod
		if err := c.Get(ctx, ns, "Pod", name, &p); err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, p.down())
	}
	return errors.Join(errs...)
}

// down says how the pod went down, nil when it is up.
func (p *pod) down() error {
	var errs []error
	name := p.Metadata.Name
	if p.Status.Reason != "" {
		errs = append(errs, fmt.Errorf("pod %s %s", name, strings.TrimSpace(p.Status.Reason+": "+p.Status.Message)))
	}
	for _, cs := range p.Status.ContainerStatuses {
		switch {
		case cs.State.Terminated != nil:
			errs = append(errs, fmt.Errorf("pod %s: container %s ended with %s", name, cs.Name, p.exit(cs.Name, *cs.State.Terminated)))
		case cs.RestartCount > 0:
			last := ""
			if t := cs.LastState.Terminated; t != nil {
				last = ", last with " + p.exit(cs.Name, *t)
			}
			errs = append(errs, fmt.Errorf("pod %s: container %s restarted %d times%s", name, cs.Name, cs.RestartCount, last))
		}
	}
	return errors.Join(errs...)
}
