package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// resource is where the API serves one kind of object.
type resource struct{ kind, group, version, plural string }

// resources are the kinds a run creates, in the order cleanup deletes
// them (the load generator first, a StatefulSet before its pods so that
// it makes no more, the claims after the pods using them).
var resources = []resource{
	{"Job", "batch", "v1", "jobs"},
	{"StatefulSet", "apps", "v1", "statefulsets"},
	{"Pod", "", "v1", "pods"},
	{"Service", "", "v1", "services"},
	{"NetworkPolicy", "networking.k8s.io", "v1", "networkpolicies"},
	{"PersistentVolumeClaim", "", "v1", "persistentvolumeclaims"},
	{"Secret", "", "v1", "secrets"},
	{"ConfigMap", "", "v1", "configmaps"},
}

func resourceOf(kind string) (resource, error) {
	for _, r := range resources {
		if r.kind == kind {
			return r, nil
		}
	}
	return resource{}, fmt.Errorf("kind %s is not one tierbench creates", kind)
}

// path is the resource's collection in namespace ns.
func (r resource) path(ns string) string {
	if r.group == "" {
		return fmt.Sprintf("/api/%s/namespaces/%s/%s", r.version, ns, r.plural)
	}
	return fmt.Sprintf("/apis/%s/%s/namespaces/%s/%s", r.group, r.version, ns, r.plural)
}

// APIError is the API server's refusal of a request.
type APIError struct {
	Method, Path string
	Code         int
	Reason       string // the Status's reason: NotFound, AlreadyExists, Invalid, ...
	Message      string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s %s: %d %s: %s", e.Method, e.Path, e.Code, e.Reason, e.Message)
}

// IsNotFound reports whether err is the API's NotFound.
func IsNotFound(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Code == http.StatusNotFound
}

// request sends one API request; the response body is returned open for
// a stream (logs) and otherwise decoded into v.
func (c *Cluster) request(ctx context.Context, method, path string, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.cfg.Host, "/")+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		var st struct{ Reason, Message string }
		if json.Unmarshal(b, &st) != nil || st.Message == "" {
			st.Message = strings.TrimSpace(string(b))
		}
		p, _, _ := strings.Cut(path, "?")
		return nil, &APIError{Method: method, Path: p, Code: resp.StatusCode, Reason: st.Reason, Message: st.Message}
	}
	return resp, nil
}

// do sends a request and decodes the JSON answer into v (nil: dropped).
func (c *Cluster) do(ctx context.Context, method, path string, body, v any) error {
	resp, err := c.request(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil || v == nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// Do sends one request to an API path and decodes the JSON answer into v
// (nil: dropped); a refusal is an *APIError. It serves the objects no run
// makes: a local node's storage classes and volumes (package
// platform/kube/node).
func (c *Cluster) Do(ctx context.Context, method, path string, body, v any) error {
	return c.do(ctx, method, path, body, v)
}

func (c *Cluster) get(ctx context.Context, path string, v any) error {
	return c.do(ctx, http.MethodGet, path, nil, v)
}

// Create creates o in namespace ns and returns its uid. With dryRun the
// API server checks it completely (admission included) and stores
// nothing.
func (c *Cluster) Create(ctx context.Context, ns string, o Object, dryRun bool) (uid string, err error) {
	r, err := resourceOf(o.Kind())
	if err != nil {
		return "", err
	}
	path := r.path(ns)
	if dryRun {
		path += "?dryRun=All"
	}
	var made struct{ Metadata struct{ UID string } }
	if err := c.do(ctx, http.MethodPost, path, o, &made); err != nil {
		return "", fmt.Errorf("create %s %s: %w", o.Kind(), o.Name(), err)
	}
	return made.Metadata.UID, nil
}

// Get reads the object of kind called name into v.
func (c *Cluster) Get(ctx context.Context, ns, kind, name string, v any) error {
	r, err := resourceOf(kind)
	if err != nil {
		return err
	}
	return c.get(ctx, r.path(ns)+"/"+name, v)
}

// Found is an object a label selector found: "Pod/tb-...-engine".
type Found struct {
	Kind, Name string
	// Deleting is true once its deletion has begun (it waits for its
	// finalizers or its pod's containers).
	Deleting bool
}

func (f Found) String() string { return f.Kind + "/" + f.Name }

// List finds the objects of every kind a run creates that match selector.
func (c *Cluster) List(ctx context.Context, ns, selector string) ([]Found, error) {
	var out []Found
	for _, r := range resources {
		var list struct {
			Items []struct {
				Metadata struct {
					Name              string
					DeletionTimestamp *string
				}
			}
		}
		if err := c.get(ctx, r.path(ns)+"?labelSelector="+url.QueryEscape(selector), &list); err != nil {
			return nil, fmt.Errorf("list %s: %w", r.plural, err)
		}
		for _, it := range list.Items {
			out = append(out, Found{Kind: r.kind, Name: it.Metadata.Name, Deleting: it.Metadata.DeletionTimestamp != nil})
		}
	}
	return out, nil
}

// Delete deletes the objects of every kind a run creates that match
// selector, and returns the first error after trying them all. The Job's
// pods carry the run's labels too, so they go without a garbage
// collector.
func (c *Cluster) Delete(ctx context.Context, ns, selector string) error {
	var errs []error
	q := "?labelSelector=" + url.QueryEscape(selector) + "&propagationPolicy=Background"
	for _, r := range resources {
		if err := c.do(ctx, http.MethodDelete, r.path(ns)+q, nil, nil); err != nil {
			errs = append(errs, fmt.Errorf("delete %s of %s: %w", r.plural, selector, err))
		}
	}
	return errors.Join(errs...)
}

// WaitGone polls until nothing matches selector, or until timeout, when
// it returns what is left.
func (c *Cluster) WaitGone(ctx context.Context, ns, selector string, timeout time.Duration) ([]Found, error) {
	var left []Found
	err := poll(ctx, timeout, 500*time.Millisecond, func() (bool, error) {
		var err error
		left, err = c.List(ctx, ns, selector)
		return len(left) == 0, err
	})
	if errors.Is(err, errTimedOut) {
		err = nil // what is left says it
	}
	return left, err
}

// Logs follows a container's log from its start until the container
// ends (the kubelet serves it, through the API server).
func (c *Cluster) Logs(ctx context.Context, ns, pod, container string) (io.ReadCloser, error) {
	path := fmt.Sprintf("/api/v1/namespaces/%s/pods/%s/log?follow=true&container=%s", ns, pod, url.QueryEscape(container))
	resp, err := c.request(ctx, http.MethodGet, path, nil)
	if err != nil {
		return nil, fmt.Errorf("read the log of pod %s: %w", pod, err)
	}
	return resp.Body, nil
}

// Namespace reports whether namespace ns exists.
func (c *Cluster) Namespace(ctx context.Context, ns string) error {
	var v any
	if err := c.get(ctx, "/api/v1/namespaces/"+ns, &v); err != nil {
		if IsNotFound(err) {
			return fmt.Errorf("namespace %q does not exist on the cluster of %s: create it (kubectl create namespace %s) or name another", ns, c.Where, ns)
		}
		return fmt.Errorf("read namespace %q on the cluster of %s: %w", ns, c.Where, err)
	}
	return nil
}
