package objects

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine/ceph/cephtest"
)

// Tests on a real single-OSD Ceph cluster with its S3 gateway. A cluster
// takes about 10 s to start here and the gateway a few more, so one
// cluster serves every step.

func TestOnCeph(t *testing.T) {
	db := cephtest.Open(t)
	ctx := context.Background()
	w := newTest(t, map[string]string{pContainers: "2", pObjects: "200", pObjectSize: "4KiB", pSeed: "1"})
	ls, err := w.Load(ctx, db, 3)
	if err != nil {
		t.Fatal(err)
	}
	if ls.Records != 400 {
		t.Errorf("load: %d records, want 400", ls.Records)
	}
	t.Logf("load of 400 objects of 4 KiB: %v", ls.Duration)
	checked, err := w.Verify(ctx, db)
	if err != nil || !strings.HasPrefix(checked, "2 buckets list all 400 objects of 4096 bytes") {
		t.Fatalf("verify after the load: %q, %v", checked, err)
	}

	t.Run("70/30 through the driver", func(t *testing.T) {
		var clients []driver.Client
		for i := range 4 {
			s, err := db.NewSession(ctx)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			c, err := w.NewClient(i, s)
			if err != nil {
				t.Fatal(err)
			}
			clients = append(clients, c)
		}
		const ops = 3000
		res, err := driver.Run(ctx, driver.Config{Ops: w.Ops(), Duration: 3 * time.Minute, MaxOps: ops}, clients)
		if err != nil {
			t.Fatal(err)
		}
		m := res.Measured
		if m.Errors != 0 {
			t.Errorf("%d errors, the first: %v", m.Errors, res.FirstError)
		}
		reads, writes := m.ByOp[opRead].Ops+m.ByOp[opRead].Errors, m.ByOp[opWrite].Ops+m.ByOp[opWrite].Errors
		share := float64(reads) / float64(reads+writes)
		t.Logf("%d reads, %d writes in %v (%.0f ops/s): read share %.4f; p50 read %v, write %v", reads, writes, m.Length, m.Throughput(), share,
			time.Duration(m.ByOp[opRead].Latency.ValueAtQuantile(50)), time.Duration(m.ByOp[opWrite].Latency.ValueAtQuantile(50)))
		if reads+writes < ops || share < 0.68 || share > 0.72 {
			t.Errorf("%d reads of %d ops = %.4f, want at least %d ops and 0.70 +- 0.02", reads, reads+writes, share, ops)
		}
		checked, err := w.Verify(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		want := "writes: " + strconv.FormatInt(m.ByOp[opWrite].Ops, 10) + " acknowledged, 0 failed"
		if !strings.Contains(checked, want) {
			t.Errorf("verify: %s; want it to say %q", checked, want)
		}
		t.Logf("verify: %s", checked)
	})

	t.Run("sad: an object lost its size, a stray object, a corrupt body", func(t *testing.T) {
		s3 := w.gateways.last()
		if _, err := s3.PutObject(ctx, "tierbench-1", objectName(3), bytes.NewReader([]byte("ten bytes!")), 10, "", "", putOptions); err != nil {
			t.Fatal(err)
		}
		if _, err := s3.PutObject(ctx, "tierbench-0", "stray", bytes.NewReader(nil), 0, "", "", putOptions); err != nil {
			t.Fatal(err)
		}
		err := get(ctx, s3, newChecker(w.pattern, w.objectSize), "tierbench-1", objectName(3))
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "10 bytes, want 4096") {
			t.Errorf("read of the short object: %v, want ErrCorrupt of 10 bytes", err)
		}
		_, err = w.Verify(ctx, db)
		for _, want := range []string{"bucket tierbench-0 lists 200 of its 200 objects, 0 of them not of 4096 bytes, and 1 objects it never had (first odd one: tierbench-0/stray)",
			"bucket tierbench-1 lists 200 of its 200 objects, 1 of them not of 4096 bytes, and 0 objects it never had (first odd one: tierbench-1/obj-00000003 of 10 bytes)"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("verify: %v; want it to say %q", err, want)
			}
		}
		if err := s3.RemoveObject(ctx, "tierbench-0", "stray", minio.RemoveObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	})
}
