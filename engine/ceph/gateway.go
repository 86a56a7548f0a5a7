package ceph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/server"
	"github.com/tierbench/tierbench/host/tcpport"
)

// The RADOS Gateway (radosgw), started on first use: a run that drives
// RADOS only does not pay for it.

// Region is what the gateway's S3 clients sign for. radosgw's default
// zonegroup takes it.
const Region = "us-east-1"

// s3User is the gateway user made for the run.
const s3User = "tierbench"

// gatewayTimeout bounds the gateway's start, which makes its pools.
const gatewayTimeout = 2 * time.Minute

// gateway is the run's radosgw: started once, on the first S3 call.
type gateway struct {
	mu sync.Mutex // held by a start, which S3 calls wait for
	// proc is the running radosgw; Check reads it without waiting for a
	// start.
	proc     atomic.Pointer[server.Process]
	endpoint engine.S3Endpoint
	err      error // of the one start
	started  bool
	closed   bool
}

// S3 starts radosgw on 127.0.0.1 the first time it is called, makes a
// user whose keys radosgw-admin generates, and returns the endpoint.
// Later and concurrent calls get the same endpoint, or the same error.
func (d *DB) S3(ctx context.Context) (engine.S3Endpoint, error) {
	g := &d.gateway
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.closed:
		return engine.S3Endpoint{}, errors.New("ceph: S3 gateway asked for after Close")
	case g.started:
		return g.endpoint, g.err
	}
	g.started = true
	g.endpoint, g.err = d.startGateway(ctx)
	if g.err != nil {
		g.err = fmt.Errorf("start the S3 gateway: %w", g.err)
	}
	return g.endpoint, g.err
}

// startGateway starts radosgw with its beast frontend on a free port (on
// its command line: no secret there; tcp_nodelay, because without it a
// small object's GET waits ~40 ms for Nagle and the client's delayed ACK,
// 45.6 ms against 3.1 ms a 4 KiB GET here), waits until it answers HTTP, then
// makes the run's user. A failed start stops what it started.
func (d *DB) startGateway(ctx context.Context) (_ engine.S3Endpoint, err error) {
	c := d.cluster
	port, err := tcpport.Free()
	if err != nil {
		return engine.S3Endpoint{}, err
	}
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	p, err := c.daemon("radosgw", rgwName, d.track, "--name", rgwName,
		"--rgw-frontends", "beast endpoint=127.0.0.1:"+strconv.Itoa(port)+" tcp_nodelay=1")
	if err != nil {
		return engine.S3Endpoint{}, err
	}
	d.gateway.proc.Store(p)
	defer func() {
		if err != nil {
			err = errors.Join(err, stopAll(p))
			d.gateway.proc.Store(nil)
		}
	}()
	client := &http.Client{Timeout: 5 * time.Second}
	if err := p.WaitReady(ctx, gatewayTimeout, answers(client, url)); err != nil {
		return engine.S3Endpoint{}, err
	}
	access, secret, err := d.makeUser(ctx)
	if err != nil {
		return engine.S3Endpoint{}, err
	}
	return engine.S3Endpoint{URL: url, AccessKey: access, SecretKey: secret, Region: Region}, nil
}

// answers is a ready check: the gateway answers an HTTP GET of / (an
// anonymous bucket list) with any status.
func answers(client *http.Client, url string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/", nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
}

// makeUser makes the run's gateway user with keys radosgw-admin
// generates, read from its JSON answer: no key on a command line.
func (d *DB) makeUser(ctx context.Context) (access, secret string, err error) {
	c := d.cluster
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	out, err := runTool(ctx, c.bins.path("radosgw-admin"), []string{"--conf", c.path(clientConfFile), "--id", adminID},
		"user", "create", "--uid="+s3User, "--display-name="+s3User)
	if err != nil {
		return "", "", fmt.Errorf("make the gateway user: %w", err)
	}
	var u struct {
		Keys []struct {
			Access string `json:"access_key"`
			Secret string `json:"secret_key"`
		} `json:"keys"`
	}
	if err := json.Unmarshal(out, &u); err != nil {
		return "", "", fmt.Errorf("make the gateway user: radosgw-admin's answer: %w", err)
	}
	if len(u.Keys) == 0 || u.Keys[0].Access == "" || u.Keys[0].Secret == "" {
		return "", "", errors.New("make the gateway user: radosgw-admin made no S3 keys")
	}
	return u.Keys[0].Access, u.Keys[0].Secret, nil
}

// stopGateway stops radosgw if it runs, and keeps S3 from starting it
// again: the first step of Close, before the cluster it needs.
func (d *DB) stopGateway() error {
	g := &d.gateway
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	p := g.proc.Swap(nil)
	if p == nil {
		return nil
	}
	if err := stopAll(p); err != nil {
		return fmt.Errorf("stop the S3 gateway: %w", err)
	}
	return nil
}
