package objects

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/minio/minio-go/v7"
	"golang.org/x/sync/errgroup"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/workload"
)

// Load makes the buckets and writes every object of each, loaders PUTs at
// a time, each object the variant loadVariant names.
func (w *Workload) Load(ctx context.Context, db engine.DB, loaders int) (workload.LoadStats, error) {
	start := time.Now()
	w.prepare()
	w.resetCounters()
	o, err := engine.NeedObjects(db)
	if err != nil {
		return workload.LoadStats{}, fmt.Errorf("%s load: %w", Name, err)
	}
	s3, err := w.connect(ctx, o)
	if err != nil {
		return workload.LoadStats{}, fmt.Errorf("%s load: %w", Name, err)
	}
	for _, b := range w.buckets {
		if err := makeBucket(ctx, s3, b); err != nil {
			return workload.LoadStats{}, fmt.Errorf("%s load: %w", Name, err)
		}
	}
	total := int64(w.containers) * int64(w.objects)
	var next atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	for range max(loaders, 1) {
		g.Go(func() error {
			var b body
			for {
				n := next.Add(1) - 1
				if n >= total || gctx.Err() != nil {
					return nil
				}
				c, i := int(n/int64(w.objects)), int(n%int64(w.objects))
				if err := put(gctx, s3, &b, w.pattern, w.objectSize, w.buckets[c], w.keys[i], w.loadVariant(c, i)); err != nil {
					return err
				}
			}
		})
	}
	if err := g.Wait(); err != nil {
		return workload.LoadStats{}, fmt.Errorf("%s load: %w", Name, err)
	}
	return workload.LoadStats{Records: total, Duration: time.Since(start)}, nil
}

// makeBucket makes bucket, or finds it made already by the run's user.
func makeBucket(ctx context.Context, s3 *minio.Core, bucket string) error {
	err := s3.MakeBucket(ctx, bucket, minio.MakeBucketOptions{})
	if err == nil {
		return nil
	}
	if ok, xerr := s3.BucketExists(ctx, bucket); xerr == nil && ok {
		return nil
	}
	return fmt.Errorf("make bucket %s: %w", bucket, err)
}

// bucketCount is what a listing of one bucket found.
type bucketCount struct {
	found     int    // the load's names, each listed once
	wrongSize int    // of them, listed with another size
	others    int    // names the workload never writes
	example   string // the first object of a wrong size or name
}

// Verify lists every bucket: each must hold every object the load wrote,
// with object_size bytes, and nothing else, since writes only overwrite
// them. No read may have returned a body that was never written. It
// records the writes acknowledged and failed, and the reads checked.
func (w *Workload) Verify(ctx context.Context, db engine.DB) (string, error) {
	w.prepare()
	o, err := engine.NeedObjects(db)
	if err != nil {
		return "", fmt.Errorf("%s verify: %w", Name, err)
	}
	s3, err := w.connect(ctx, o)
	if err != nil {
		return "", fmt.Errorf("%s verify: %w", Name, err)
	}
	var errs []error
	listed := 0
	for _, b := range w.buckets {
		n, err := w.countBucket(ctx, s3, b)
		if err != nil {
			return "", fmt.Errorf("%s verify: list bucket %s: %w", Name, b, err)
		}
		listed += n.found
		if n.found != w.objects || n.wrongSize > 0 || n.others > 0 {
			errs = append(errs, fmt.Errorf("bucket %s lists %d of its %d objects, %d of them not of %d bytes, and %d objects it never had (first odd one: %s)",
				b, n.found, w.objects, n.wrongSize, w.objectSize, n.others, n.example))
		}
	}
	if n := w.readsCorrupt.Load(); n > 0 {
		errs = append(errs, fmt.Errorf("%d reads returned a body no write had put there (wrong length or bytes)", n))
	}
	counts := fmt.Sprintf("writes: %d acknowledged, %d failed (refused or cut off: old or new content); reads: %d whole bodies checked, %d corrupt, %d failed",
		w.writesAcked.Load(), w.writesFailed.Load(), w.readsOK.Load(), w.readsCorrupt.Load(), w.readsFailed.Load())
	if len(errs) > 0 {
		return "", fmt.Errorf("%s lost or corrupted objects: %w; %s", Name, errors.Join(errs...), counts)
	}
	return fmt.Sprintf("%d buckets list all %d objects of %d bytes, nothing else; %s",
		w.containers, listed, w.objectSize, counts), nil
}

// countBucket lists bucket whole.
func (w *Workload) countBucket(ctx context.Context, s3 *minio.Core, bucket string) (bucketCount, error) {
	ctx, cancel := context.WithCancel(ctx) // stops minio's lister if we stop early
	defer cancel()
	var n bucketCount
	seen := make([]bool, w.objects)
	odd := func(name string) {
		if n.example == "" {
			n.example = name
		}
	}
	for obj := range s3.Client.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true}) {
		if obj.Err != nil {
			return n, obj.Err
		}
		i, ok := objectNumber(obj.Key)
		if !ok || i >= w.objects || seen[i] {
			n.others++
			odd(fmt.Sprintf("%s/%s", bucket, obj.Key))
			continue
		}
		seen[i] = true
		n.found++
		if obj.Size != int64(w.objectSize) {
			n.wrongSize++
			odd(fmt.Sprintf("%s/%s of %d bytes", bucket, obj.Key, obj.Size))
		}
	}
	return n, nil
}
