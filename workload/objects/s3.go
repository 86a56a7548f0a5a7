package objects

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/tierbench/tierbench/engine"
)

// defaultRegion is the region of an endpoint that names none: what RGW
// answers to out of the box.
const defaultRegion = "us-east-1"

// s3Wait bounds how long a client waits for the engine to start its
// gateway (NewClient has no context of its own).
const s3Wait = 2 * time.Minute

// gateways makes one minio client per gateway endpoint and shares it:
// minio's client is safe for concurrent use, and one connection pool
// serves every workload client. A new endpoint (an engine reopened for a
// cold start) gets a new one.
type gateways struct {
	mu   sync.Mutex
	ep   engine.S3Endpoint
	core *minio.Core
}

// get returns the client of ep, made on first use.
func (g *gateways) get(ep engine.S3Endpoint) (*minio.Core, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.core != nil && g.ep == ep {
		return g.core, nil
	}
	core, err := newCore(ep)
	if err != nil {
		return nil, err
	}
	g.ep, g.core = ep, core
	return core, nil
}

// last returns the client made last, or nil: what a client falls back on
// when its session does not reach the gateway itself.
func (g *gateways) last() *minio.Core {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.core
}

// newCore makes a minio client of ep: path-style buckets (RGW on
// 127.0.0.1 has no DNS names for virtual hosts), the endpoint's region
// and transport, and no retries, so a failed request is a failed op as
// CosBench counts it rather than a slow one. Errors never show the keys.
func newCore(ep engine.S3Endpoint) (*minio.Core, error) {
	u, err := url.Parse(ep.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return nil, fmt.Errorf("S3 endpoint %q: want http://host:port or https://host:port", ep.URL)
	}
	region := ep.Region
	if region == "" {
		region = defaultRegion
	}
	var transport http.RoundTripper
	if ep.Client != nil && ep.Client.Transport != nil {
		transport = ep.Client.Transport
	} else {
		transport = newTransport()
	}
	core, err := minio.NewCore(u.Host, &minio.Options{
		Creds:        credentials.NewStaticV4(ep.AccessKey, ep.SecretKey, ""),
		Secure:       u.Scheme == "https",
		Transport:    transport,
		Region:       region,
		BucketLookup: minio.BucketLookupPath,
		MaxRetries:   1,
	})
	if err != nil {
		return nil, fmt.Errorf("S3 client for %s: %w", ep.URL, err)
	}
	return core, nil
}

// newTransport is the transport of an endpoint without one: Go's default
// with an idle connection kept for every client, so a closed loop of many
// clients reuses its connections instead of opening one per op.
func newTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 0
	t.MaxIdleConnsPerHost = 1024
	t.IdleConnTimeout = 30 * time.Second
	return t
}

// connect returns the minio client of objects' gateway, which S3 starts
// on first use.
func (w *Workload) connect(ctx context.Context, o engine.Objects) (*minio.Core, error) {
	ep, err := o.S3(ctx)
	if err != nil {
		return nil, fmt.Errorf("S3 gateway: %w", err)
	}
	return w.gateways.get(ep)
}

// putOptions send the body unsigned (UNSIGNED-PAYLOAD; the headers are
// signed): hashing every body, or signing it chunk by chunk as minio-go
// does over http by default, would load the client's CPU, not the
// storage.
var putOptions = minio.PutObjectOptions{DisableContentSha256: true}

// put writes variant v of object key in bucket as one PUT.
func put(ctx context.Context, s3 *minio.Core, b *body, pattern []byte, size int, bucket, key string, v int) error {
	b.set(pattern, size, v)
	if _, err := s3.PutObject(ctx, bucket, key, b, int64(size), "", "", putOptions); err != nil {
		return fmt.Errorf("write %s/%s: %w", bucket, key, err)
	}
	return nil
}

// get reads object key of bucket whole and checks it: an error wrapping
// ErrCorrupt is a whole answer of the wrong length or content.
func get(ctx context.Context, s3 *minio.Core, c *checker, bucket, key string) error {
	r, info, _, err := s3.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return fmt.Errorf("read %s/%s: %w", bucket, key, err)
	}
	if info.Size != int64(c.size) {
		err = fmt.Errorf("%w: %d bytes, want %d", ErrCorrupt, info.Size, c.size)
	} else {
		err = c.check(r)
	}
	if cerr := r.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("read %s/%s: %w", bucket, key, err)
	}
	return nil
}
