package engine

import (
	"context"
	"net/http"
)

// ModelObjects is an object store (Ceph): objects in buckets through an S3
// gateway, and objects in a pool through RADOS, reached through Objects on
// the DB.
const ModelObjects Model = "objects"

// S3Endpoint is how an object workload reaches a running S3 gateway (Ceph's
// RADOS Gateway) with the run's own credentials.
type S3Endpoint struct {
	// URL is the gateway's base URL, on 127.0.0.1: "http://127.0.0.1:7480".
	URL string
	// AccessKey and SecretKey are a user's keys made for this run; they
	// never reach a command line or the results.
	AccessKey, SecretKey string
	// Region is what the gateway answers to ("us-east-1" unless set).
	Region string
	// Client reaches URL (nil: http.DefaultClient).
	Client *http.Client
}

// RadosCluster is how a tool (the rados CLI) reaches a running Ceph
// cluster: a config file naming the monitors and a keyring, both readable
// only by root, and a pool made for benchmarks.
type RadosCluster struct {
	// Conf is the cluster's ceph.conf for clients (-c); it names Keyring.
	Conf string
	// ID is the client's name without "client." ("admin").
	ID string
	// Keyring holds the client's key (mode 0600).
	Keyring string
	// Pool is a replicated pool made for the run's objects.
	Pool string
	// Replicas is the pool's size.
	Replicas int
}

// Objects is the object data model. A Ceph DB implements it; S3 starts the
// gateway on first use (a run that drives RADOS only does not pay for it)
// and returns its endpoint.
type Objects interface {
	S3(ctx context.Context) (S3Endpoint, error)
	Rados() RadosCluster
}

// NeedObjects returns a DB as Objects, or an ErrNoModel.
func NeedObjects(v any) (Objects, error) {
	o, ok := v.(Objects)
	if !ok {
		return nil, noModel("the engine is not an object store; this workload needs one (ceph)")
	}
	return o, nil
}
