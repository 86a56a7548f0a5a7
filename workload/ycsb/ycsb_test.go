package ycsb

import (
	"context"
	"errors"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/pebble"
	"github.com/tierbench/tierbench/workload"
)

func spec(t *testing.T, name string) workload.Spec {
	t.Helper()
	for _, s := range Specs() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no spec %s", name)
	return workload.Spec{}
}

func newW(t *testing.T, name string, params map[string]string) *Workload {
	t.Helper()
	w, err := spec(t, name).Build(params)
	if err != nil {
		t.Fatalf("%s.Build(%v): %v", name, params, err)
	}
	return w.(*Workload)
}

func TestSpecs(t *testing.T) {
	want := map[string][]string{
		"ycsb-a": {workload.OpRead, workload.OpUpdate},
		"ycsb-b": {workload.OpRead, workload.OpUpdate},
		"ycsb-c": {workload.OpRead},
		"ycsb-d": {workload.OpRead, workload.OpInsert},
		"ycsb-e": {workload.OpInsert, workload.OpScan},
		"ycsb-f": {workload.OpRead, workload.OpRMW},
	}
	dist := map[string]string{"ycsb-d": distLatest}
	specs := Specs()
	if len(specs) != len(want) {
		t.Fatalf("%d specs, want %d", len(specs), len(want))
	}
	for _, s := range specs {
		if s.Doc == "" || strings.Contains(s.Doc, "\n") {
			t.Errorf("%s: Doc %q, want one line", s.Name, s.Doc)
		}
		for _, p := range s.Params {
			if err := p.Check(); err != nil {
				t.Errorf("%s: %v", s.Name, err)
			}
		}
		w, err := s.Build(nil)
		if err != nil {
			t.Fatalf("%s with defaults: %v", s.Name, err)
		}
		if got := w.Ops(); !slices.Equal(got, want[s.Name]) {
			t.Errorf("%s: Ops() = %v, want %v", s.Name, got, want[s.Name])
		}
		v, _ := s.Resolve(nil)
		p := v.Map()
		// Every parameter but the unset seed is recorded.
		wantKeys := slices.DeleteFunc(s.ParamNames(), func(n string) bool { return n == pSeed })
		if !slices.Equal(slices.Sorted(maps.Keys(p)), wantKeys) {
			t.Errorf("%s: recorded parameters %v, want %v", s.Name, slices.Sorted(maps.Keys(p)), wantKeys)
		}
		wantDist := dist[s.Name]
		if wantDist == "" {
			wantDist = distZipfian
		}
		if p[pRequestDist] != wantDist || p[pRecords] != "1000" || p[pFieldCount] != "10" ||
			p[pFieldLength] != "100" || p[pMaxScan] != "100" || p[pInsertOrder] != orderHashed {
			t.Errorf("%s: unexpected defaults %v", s.Name, p)
		}
	}
}

func TestSpecOverrides(t *testing.T) {
	w := newW(t, "ycsb-a", map[string]string{pRecords: "5000", pUpdate: "0.3", pScan: "0.2", pRequestDist: distUniform})
	if got, want := w.Ops(), []string{workload.OpRead, workload.OpUpdate, workload.OpScan}; !slices.Equal(got, want) {
		t.Errorf("Ops() = %v, want %v", got, want)
	}
	// A field length may be written as a size; theta near its open bounds
	// is accepted.
	w = newW(t, "ycsb-a", map[string]string{pFieldLength: "1KiB", pZipfConst: "0.999", pRecords: " 7 ", pWriteAll: "1"})
	if w.cfg.fieldLength != 1024 || w.cfg.theta != 0.999 || w.cfg.records != 7 || !w.cfg.writeAll {
		t.Errorf("config %+v", w.cfg)
	}
	// YCSB sizes the zipfian key space for expected inserts.
	w = newW(t, "ycsb-e", map[string]string{pOperationCount: "10000"})
	if want := int64(1000 + 10000*0.05*2 + 1); w.keyItems != want {
		t.Errorf("zipfian key space %d, want %d", w.keyItems, want)
	}
}

func TestSpecNewRejects(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params map[string]string
		want   []string // substrings of the error
	}{
		{"records not a number", map[string]string{pRecords: "lots"}, []string{`records "lots" is not a whole number`}},
		{"records zero", map[string]string{pRecords: "0"}, []string{"records 0 is out of range: it must be at least 1"}},
		{"records negative", map[string]string{pRecords: "-5"}, []string{"records -5 is out of range"}},
		{"operationcount negative", map[string]string{pOperationCount: "-1"}, []string{"operationcount -1 is out of range: it must be at least 0"}},
		{"fieldcount zero", map[string]string{pFieldCount: "0"}, []string{"fieldcount 0 is out of range: it must be from 1 to 2147483647"}},
		{"fieldcount float", map[string]string{pFieldCount: "2.5"}, []string{`fieldcount "2.5" is not a whole number`}},
		{"fieldcount beyond 32 bits", map[string]string{pFieldCount: "2147483648"}, []string{"fieldcount 2147483648 is out of range"}},
		{"fieldlength negative", map[string]string{pFieldLength: "-100"}, []string{`fieldlength "-100" is not a size`}},
		{"fieldlength zero", map[string]string{pFieldLength: "0"}, []string{"fieldlength 0 is out of range: it must be from 1 to 2147483647"}},
		{"fieldlength beyond 32 bits", map[string]string{pFieldLength: "2GiB"}, []string{"fieldlength 2GiB is out of range"}},
		{"readproportion negative", map[string]string{pRead: "-0.1"}, []string{"readproportion -0.1 is out of range: it must be from 0 to 1"}},
		{"readproportion above 1", map[string]string{pRead: "1.5"}, []string{"readproportion 1.5 is out of range: it must be from 0 to 1"}},
		{"proportions sum above 1", map[string]string{pRead: "0.9"}, []string{"workload ycsb-a: proportions sum to 1.4", "readproportion 0.9 + updateproportion 0.5", "add up to 1"}},
		{"proportions sum below 1", map[string]string{pRead: "0.2", pUpdate: "0.3"}, []string{"sum to 0.5", "not 1"}},
		{"updateproportion not a number", map[string]string{pUpdate: "half"}, []string{`updateproportion "half" is not a fraction from 0 to 1`}},
		{"insertproportion NaN", map[string]string{pInsert: "NaN"}, []string{`insertproportion "NaN" is not a fraction`}},
		{"scanproportion negative", map[string]string{pScan: "-1"}, []string{"scanproportion -1 is out of range"}},
		{"rmw proportion inf", map[string]string{pRMW: "+Inf"}, []string{`readmodifywriteproportion "+Inf" is not a fraction`}},
		{"proportions sum to zero", map[string]string{pRead: "0", pUpdate: "0"}, []string{"sum to 0", pRead, pRMW}},
		{"request distribution", map[string]string{pRequestDist: "zipf"}, []string{`requestdistribution "zipf" must be zipfian, uniform or latest`}},
		{"request distribution hotspot", map[string]string{pRequestDist: "hotspot"}, []string{pRequestDist, `"hotspot"`}},
		{"zipfian constant 1", map[string]string{pZipfConst: "1"}, []string{"zipfianconstant 1 is out of range: it must be above 0 and below 1"}},
		{"zipfian constant 0", map[string]string{pZipfConst: "0"}, []string{"zipfianconstant 0 is out of range: it must be above 0 and below 1"}},
		{"zipfian constant above 1", map[string]string{pZipfConst: "1.2"}, []string{"zipfianconstant 1.2 is out of range: it must be from 0 to 1"}},
		{"zipfian constant text", map[string]string{pZipfConst: "high"}, []string{`zipfianconstant "high" is not a decimal number`}},
		{"maxscanlength zero", map[string]string{pMaxScan: "0"}, []string{"maxscanlength 0 is out of range: it must be at least 1"}},
		{"scan length distribution", map[string]string{pScanLenDist: "latest"}, []string{`scanlengthdistribution "latest" must be uniform or zipfian`}},
		{"insert order", map[string]string{pInsertOrder: "random"}, []string{`insertorder "random" must be hashed or ordered`}},
		{"writeallfields", map[string]string{pWriteAll: "maybe"}, []string{`writeallfields "maybe" is not true or false`}},
		{"seed", map[string]string{pSeed: "abc"}, []string{`seed "abc" is not a whole number`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := spec(t, "ycsb-a").Build(tc.params)
			if err == nil {
				t.Fatalf("Build(%v) succeeded, want error", tc.params)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// TestProportionsWithinTolerance accepts decimal shares whose binary sum is
// not exactly 1 (0.1 + 0.2 + 0.7).
func TestProportionsWithinTolerance(t *testing.T) {
	w := newW(t, "ycsb-a", map[string]string{pRead: "0.1", pUpdate: "0.2", pScan: "0.7"})
	if got := len(w.Ops()); got != 3 {
		t.Errorf("ops %v, want read, update and scan", w.Ops())
	}
}

// TestEstimatedBytes checks the lower bound of the loaded data set that
// study validation compares tier sizes with.
func TestEstimatedBytes(t *testing.T) {
	w := newW(t, "ycsb-a", map[string]string{pRecords: "1000", pFieldCount: "4", pFieldLength: "50"})
	if got, want := w.EstimatedBytes(), int64(1000*(4*50+keyBytes)); got != want {
		t.Errorf("EstimatedBytes = %d, want %d", got, want)
	}
	huge := newW(t, "ycsb-c", map[string]string{pRecords: "9000000000000000000", pFieldCount: "1000"})
	if huge.EstimatedBytes() <= 0 {
		t.Errorf("EstimatedBytes overflowed: %d", huge.EstimatedBytes())
	}
}

// TestAcknowledge checks the insert key sequence: acknowledging out of order
// only exposes the contiguous prefix, and concurrent inserts all end up
// acknowledged.
func TestAcknowledge(t *testing.T) {
	w := newW(t, "ycsb-d", map[string]string{pRecords: "10"})
	if w.Acked() != 10 {
		t.Fatalf("acked %d after New, want 10", w.Acked())
	}
	k := []int64{w.next.Add(1) - 1, w.next.Add(1) - 1, w.next.Add(1) - 1}
	w.acknowledge(k[1])
	w.acknowledge(k[2])
	if w.Acked() != 10 {
		t.Errorf("acked %d with key 10 pending, want 10", w.Acked())
	}
	w.acknowledge(k[0])
	if w.Acked() != 13 {
		t.Errorf("acked %d after all three, want 13", w.Acked())
	}

	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20_000 {
				k := w.next.Add(1) - 1
				if err := w.waitWindow(context.Background(), k); err != nil {
					t.Error(err)
					return
				}
				w.acknowledge(k)
			}
		})
	}
	wg.Wait()
	if got, want := w.Acked(), int64(13+8*20_000); got != want || w.next.Load() != want {
		t.Errorf("acked %d, next %d, want both %d", got, w.next.Load(), want)
	}
}

// openPebble opens a real Pebble engine in temporary folders, with engine
// options opts.
func openPebble(t *testing.T, opts map[string]string) engine.DB {
	t.Helper()
	db, err := pebble.Engine{}.Open(context.Background(), engine.Config{
		Dirs:       map[string]string{"data": t.TempDir(), "wal": t.TempDir()},
		Durability: engine.NoSync,
		Options:    pebble.Engine{}.Spec().MustResolveOptions(opts),
	})
	if err != nil {
		t.Fatalf("open pebble: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("close pebble: %v", err)
		}
	})
	return db
}

func session(t *testing.T, db engine.DB) engine.Session {
	t.Helper()
	s, err := db.NewSession(context.Background())
	if err != nil {
		t.Fatalf("new session: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestLoadAndRun loads 2000 records into Pebble and runs every workload.
func TestLoadAndRun(t *testing.T) {
	const records, ops = 2000, 3000
	ctx := context.Background()
	for _, s := range Specs() {
		t.Run(s.Name, func(t *testing.T) {
			db := openPebble(t, nil)
			w := newW(t, s.Name, map[string]string{pRecords: "2000", pSeed: "7"})
			st, err := w.Load(ctx, db, 4)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			if st.Records != records || st.Duration <= 0 {
				t.Errorf("load stats %+v, want %d records", st, records)
			}
			if w.Acked() != records {
				t.Errorf("acked %d after load, want %d", w.Acked(), records)
			}
			// Every loaded key is there.
			rec, _ := engine.NeedRecords(session(t, db))
			for _, k := range []int64{0, 1, records / 2, records - 1} {
				found, err := rec.Read(ctx, AppendKey(nil, k, true))
				if err != nil || !found {
					t.Errorf("loaded key %d: found=%v err=%v", k, found, err)
				}
			}
			if n, err := rec.Scan(ctx, []byte("user"), records+10); err != nil || n != records {
				t.Errorf("scan of everything: %d records (err %v), want %d", n, err, records)
			}

			const clients = 3
			perOp := make([]int, len(w.Ops()))
			var wg sync.WaitGroup
			var mu sync.Mutex
			for id := range clients {
				c, err := w.NewClient(id, session(t, db))
				if err != nil {
					t.Fatalf("new client: %v", err)
				}
				wg.Go(func() {
					local := make([]int, len(w.Ops()))
					for range ops {
						op, err := c.Do(ctx)
						if err != nil {
							t.Errorf("client %d: %s: %v", id, w.Ops()[op], err)
							return
						}
						local[op]++
					}
					mu.Lock()
					for i, n := range local {
						perOp[i] += n
					}
					mu.Unlock()
				})
			}
			wg.Wait()
			for i, n := range perOp {
				if n == 0 {
					t.Errorf("op %s never issued", w.Ops()[i])
				}
			}
			inserts := 0
			if i := slices.Index(w.Ops(), workload.OpInsert); i >= 0 {
				inserts = perOp[i]
			}
			if got, want := w.Acked(), int64(records+inserts); got != want {
				t.Errorf("acked %d after %d inserts, want %d", got, inserts, want)
			}
			if inserts > 0 {
				// The newest inserted key is readable.
				found, err := rec.Read(ctx, AppendKey(nil, w.Acked()-1, true))
				if err != nil || !found {
					t.Errorf("newest inserted key: found=%v err=%v", found, err)
				}
			}
			t.Logf("%s: %v = %v", s.Name, w.Ops(), perOp)
		})
	}
}

// TestReadsFindLoadedRecords checks that every key a client chooses exists:
// with nothing but reads, every read must hit.
func TestReadsFindLoadedRecords(t *testing.T) {
	ctx := context.Background()
	for _, dist := range []string{distZipfian, distUniform, distLatest} {
		t.Run(dist, func(t *testing.T) {
			db := openPebble(t, nil)
			w := newW(t, "ycsb-c", map[string]string{pRecords: "2000", pRequestDist: dist, pInsertOrder: orderOrdrd})
			if _, err := w.Load(ctx, db, 2); err != nil {
				t.Fatalf("load: %v", err)
			}
			c, err := w.NewClient(0, session(t, db))
			if err != nil {
				t.Fatal(err)
			}
			cl := c.(*Client)
			for range 5000 {
				key := cl.nextKey()
				found, err := cl.rec.Read(ctx, key)
				if err != nil || !found {
					t.Fatalf("chosen key %s: found=%v err=%v", key, found, err)
				}
			}
		})
	}
}

// TestSeedReproducible checks that a seeded client draws the same sequence.
func TestSeedReproducible(t *testing.T) {
	db := openPebble(t, nil)
	var seqs [2][]string
	for i := range seqs {
		w := newW(t, "ycsb-a", map[string]string{pSeed: "99"})
		c, err := w.NewClient(3, session(t, db))
		if err != nil {
			t.Fatal(err)
		}
		cl := c.(*Client)
		for range 50 {
			seqs[i] = append(seqs[i], string(cl.nextKey()))
		}
	}
	if !slices.Equal(seqs[0], seqs[1]) {
		t.Errorf("same seed, different keys:\n%v\n%v", seqs[0], seqs[1])
	}
}

// TestDoAllocations checks that Do adds no allocations to what the engine
// itself does. A twin client with the same seed replays the exact keys (and
// scan lengths) Do will use, and those engine calls are measured directly;
// Do must not allocate more. Pebble allocates on its own (iterators), so
// the engine's count is the floor, not zero.
func TestDoAllocations(t *testing.T) {
	ctx := context.Background()
	db := openPebble(t, nil)
	load := newW(t, "ycsb-c", map[string]string{pRecords: "2000"})
	if _, err := load.Load(ctx, db, 2); err != nil {
		t.Fatalf("load: %v", err)
	}
	const runs = 2000
	for _, tc := range []struct {
		name   string
		spec   string
		params map[string]string
		kind   opKind
	}{
		{"read zipfian", "ycsb-c", nil, kindRead},
		{"read uniform", "ycsb-c", map[string]string{pRequestDist: distUniform}, kindRead},
		{"read latest", "ycsb-d", map[string]string{pInsert: "0", pRead: "1"}, kindRead},
		{"update", "ycsb-a", map[string]string{pRead: "0", pUpdate: "1"}, kindUpdate},
		{"update all fields", "ycsb-a", map[string]string{pRead: "0", pUpdate: "1", pWriteAll: "true"}, kindUpdate},
		{"insert", "ycsb-d", map[string]string{pRead: "0", pInsert: "1"}, kindInsert},
		{"scan", "ycsb-e", map[string]string{pInsert: "0", pScan: "1"}, kindScan},
		{"scan zipfian length", "ycsb-e", map[string]string{pInsert: "0", pScan: "1", pScanLenDist: distZipfian}, kindScan},
	} {
		t.Run(tc.name, func(t *testing.T) {
			params := map[string]string{pRecords: "2000", pSeed: "11"}
			maps.Copy(params, tc.params)
			newClient := func() *Client {
				c, err := newW(t, tc.spec, params).NewClient(0, session(t, db))
				if err != nil {
					t.Fatal(err)
				}
				return c.(*Client)
			}
			// The twin draws what Do would: the op, then the key, then
			// the scan length or the field values.
			twin := newClient()
			type call struct {
				key    []byte
				n      int
				upd    []engine.Field
				fields [][]byte
			}
			calls := make([]call, runs+1)
			for i := range calls {
				twin.rng.Float64()
				if tc.kind == kindInsert {
					k := twin.w.next.Add(1) - 1
					c := call{key: AppendKey(nil, k, true), fields: make([][]byte, len(twin.fields))}
					for f := range c.fields {
						c.fields[f] = twin.w.value(twin.rng, twin.pool)
					}
					calls[i] = c
					continue
				}
				c := call{key: slices.Clone(twin.nextKey())}
				switch tc.kind {
				case kindScan:
					if twin.scanZipf != nil {
						c.n = int(twin.scanZipf.Next())
					} else {
						c.n = int(1 + twin.rng.Int64N(twin.w.cfg.maxScan))
					}
				case kindUpdate:
					c.upd = make([]engine.Field, len(twin.upd))
					if twin.w.cfg.writeAll {
						for f := range c.upd {
							c.upd[f] = engine.Field{Index: f, Value: twin.w.value(twin.rng, twin.pool)}
						}
					} else {
						c.upd[0] = engine.Field{Index: twin.rng.IntN(twin.w.cfg.fieldCount), Value: twin.w.value(twin.rng, twin.pool)}
					}
				}
				calls[i] = c
			}
			i := 0
			direct := testing.AllocsPerRun(runs, func() {
				c := calls[i]
				i++
				var err error
				switch tc.kind {
				case kindRead:
					_, err = twin.rec.Read(ctx, c.key)
				case kindScan:
					_, err = twin.rec.Scan(ctx, c.key, c.n)
				case kindUpdate:
					err = twin.rec.Update(ctx, c.key, c.upd)
				case kindInsert:
					err = twin.rec.Insert(ctx, c.key, c.fields)
				}
				if err != nil {
					t.Fatal(err)
				}
			})
			// AllocsPerRun counts every goroutine, and a background
			// memtable flush (Pebble's merge operator allocates) can land
			// in a window; Do itself is deterministic, so the best of a
			// few windows is its true count.
			cl := newClient()
			got := math.Inf(1)
			for range 5 {
				got = min(got, testing.AllocsPerRun(runs/4, func() {
					if _, err := cl.Do(ctx); err != nil {
						t.Fatal(err)
					}
				}))
				if got <= direct {
					break
				}
			}
			t.Logf("%.2f allocs per Do, engine alone %.2f", got, direct)
			if got > direct {
				t.Errorf("Do allocates %.2f times per call, the engine alone %.2f", got, direct)
			}
		})
	}
}

// TestClientStepsDoNotAllocate checks the client's own work, without the
// engine: choosing the op, the key and the values.
func TestClientStepsDoNotAllocate(t *testing.T) {
	db := openPebble(t, nil)
	for _, name := range []string{"ycsb-a", "ycsb-d", "ycsb-e"} {
		for _, writeAll := range []string{"false", "true"} {
			w := newW(t, name, map[string]string{pWriteAll: writeAll, pScanLenDist: distZipfian})
			c, err := w.NewClient(0, session(t, db))
			if err != nil {
				t.Fatal(err)
			}
			cl := c.(*Client)
			got := testing.AllocsPerRun(1000, func() {
				_ = cl.rng.Float64()
				cl.nextKey()
				for i := range cl.fields {
					cl.fields[i] = w.value(cl.rng, cl.pool)
				}
				cl.upd[0] = engine.Field{Index: cl.rng.IntN(w.cfg.fieldCount), Value: w.value(cl.rng, cl.pool)}
				if cl.scanZipf != nil {
					cl.scanZipf.Next()
				}
			})
			if got != 0 {
				t.Errorf("%s writeallfields=%s: %.1f allocations per op, want 0", name, writeAll, got)
			}
		}
	}
}

// TestLoadCancelled checks that Load stops between batches once its context
// is cancelled and reports why.
func TestLoadCancelled(t *testing.T) {
	db := openPebble(t, nil)
	w := newW(t, "ycsb-a", map[string]string{pRecords: "100000"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	st, err := w.Load(ctx, db, 2)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Load with a cancelled context: %v, want context.Canceled", err)
	}
	if st.Records >= 100000 {
		t.Errorf("loaded %d records after cancel", st.Records)
	}
}
