package objects

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/workload"
)

func newTest(t *testing.T, params map[string]string) *Workload {
	t.Helper()
	w, err := Spec().Build(params)
	if err != nil {
		t.Fatal(err)
	}
	return w.(*Workload)
}

func TestParams(t *testing.T) {
	w := newTest(t, nil)
	if w.containers != 1 || w.objects != 1000 || w.objectSize != 4096 || w.readPercent != 70 || w.seeded {
		t.Errorf("defaults: %+v", w)
	}
	if got := w.EstimatedBytes(); got != 1000*4096 {
		t.Errorf("EstimatedBytes = %d, want %d", got, 1000*4096)
	}
	if ops := w.Ops(); len(ops) != 2 || ops[opRead] != "read" || ops[opWrite] != "write" {
		t.Errorf("Ops = %v", ops)
	}
	if Spec().Model != engine.ModelObjects || !strings.Contains(Spec().Doc, "CosBench-like, not CosBench") {
		t.Errorf("spec: model %s, doc %q", Spec().Model, Spec().Doc)
	}
	sizes := []struct {
		in   string
		want int
	}{{"4096", 4096}, {"4KiB", 4096}, {" 4KB", 4000}, {"1MiB", 1 << 20}, {"8", 8}}
	for _, c := range sizes {
		if w := newTest(t, map[string]string{pObjectSize: c.in}); w.objectSize != c.want {
			t.Errorf("object_size %q = %d, want %d", c.in, w.objectSize, c.want)
		}
	}
	w = newTest(t, map[string]string{pContainers: "3", pObjects: "10", pReadPercent: "0", pSeed: "5"})
	if w.containers != 3 || w.objects != 10 || w.readPercent != 0 || !w.seeded || w.seed != 5 {
		t.Errorf("overrides: %+v", w)
	}
}

func TestBadParams(t *testing.T) {
	for _, c := range []struct {
		name, param, value, want string
	}{
		{"no bucket", pContainers, "0", "containers 0 is out of range: it must be from 1 to 1000"},
		{"too many buckets", pContainers, "1001", "from 1 to 1000"},
		{"no objects", pObjects, "0", "objects 0 is out of range"},
		{"not a number", pObjects, "many", "objects \"many\" is not a whole number"},
		{"shorter than its header", pObjectSize, "7", "from 8 to 1GiB"},
		{"too large", pObjectSize, "2GiB", "from 8 to 1GiB"},
		{"not a size", pObjectSize, "big", "object_size \"big\" is not a size"},
		{"zero", pObjectSize, "0", "object_size 0 is out of range"},
		{"over 100 percent", pReadPercent, "101", "read_percent 101 is out of range: it must be from 0 to 100%"},
		{"negative percent", pReadPercent, "-1", "read_percent"},
		{"seed", pSeed, "x", "seed \"x\" is not a whole number"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Spec().Build(map[string]string{c.param: c.value})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s %q: error %v, want one containing %q", c.param, c.value, err, c.want)
			}
		})
	}
}

func TestNames(t *testing.T) {
	if got := bucketName(0); got != "tierbench-0" {
		t.Errorf("bucketName(0) = %q", got)
	}
	if got := bucketName(12); got != "tierbench-12" {
		t.Errorf("bucketName(12) = %q", got)
	}
	for _, i := range []int{0, 7, 999, 12345678, 99999999} {
		name := objectName(i)
		if got, ok := objectNumber(name); !ok || got != i {
			t.Errorf("objectNumber(%q) = %d, %v; want %d", name, got, ok, i)
		}
	}
	if got := objectName(42); got != "obj-00000042" {
		t.Errorf("objectName(42) = %q", got)
	}
	for _, name := range []string{"obj-42", "obj-000000042", "obj--0000001", "obj-0000000x", "tierbench-1", ""} {
		if i, ok := objectNumber(name); ok {
			t.Errorf("objectNumber(%q) = %d, want no object of the workload", name, i)
		}
	}
	w := newTest(t, map[string]string{pContainers: "2", pObjects: "3"})
	w.prepare()
	if strings.Join(w.buckets, ",") != "tierbench-0,tierbench-1" || strings.Join(w.keys, ",") != "obj-00000000,obj-00000001,obj-00000002" {
		t.Errorf("names: %v %v", w.buckets, w.keys)
	}
	seen := map[int]bool{}
	for c := range 2 {
		for i := range 3 {
			seen[w.loadVariant(c, i)] = true
		}
	}
	if len(seen) != 6 {
		t.Errorf("the load's 6 objects have %d variants, want 6 distinct", len(seen))
	}
}

// TestDeck checks the op mix: exactly read_percent reads in every 100 ops
// of a client, in an order that differs between clients.
func TestDeck(t *testing.T) {
	for _, pct := range []int{0, 1, 30, 70, 99, 100} {
		for id := range uint64(3) {
			d := newDeck(pct)
			rng := workload.NewRand(1, true, streamClients, id)
			for round := range 35 {
				reads := 0
				for range 100 {
					if d.deal(rng) == opRead {
						reads++
					}
				}
				if reads != pct {
					t.Fatalf("read_percent %d, client %d, ops %d..%d: %d reads", pct, id, round*100, round*100+99, reads)
				}
			}
		}
	}
	order := func(id uint64) string {
		d, rng := newDeck(70), workload.NewRand(1, true, streamClients, id)
		var b strings.Builder
		for range 100 {
			b.WriteByte("rw"[d.deal(rng)])
		}
		return b.String()
	}
	if a, b := order(0), order(1); a == b || strings.HasPrefix(a, strings.Repeat("r", 70)) {
		t.Errorf("two clients deal %s and %s: want each a random order", a, b)
	}
	// A run cut short mid-deck: 4 clients, 3,010 ops in all.
	reads, ops := 0, 0
	for id := range uint64(4) {
		d, rng := newDeck(70), workload.NewRand(7, true, streamClients, id)
		for range 750 + int(id)*3 + 1 {
			ops++
			if d.deal(rng) == opRead {
				reads++
			}
		}
	}
	if share := float64(reads) / float64(ops); share < 0.68 || share > 0.72 {
		t.Errorf("%d reads of %d ops = %.3f, want 0.70 +- 0.02", reads, ops, share)
	}
}

// bodyOf returns variant v of an object of size bytes as a PUT sends it.
func bodyOf(t *testing.T, pattern []byte, size, v int) []byte {
	t.Helper()
	var b body
	b.set(pattern, size, v)
	got, err := io.ReadAll(iotest.HalfReader(&b))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestContent(t *testing.T) {
	for _, size := range []int{8, 9, 4096, readChunk + 3} {
		pattern := newPattern(42, size)
		if again := newPattern(42, size); !bytes.Equal(pattern, again) {
			t.Fatalf("size %d: the pattern differs between two makes of one seed", size)
		}
		c := newChecker(pattern, size)
		for _, v := range []int{0, 1, variants - 1} {
			got := bodyOf(t, pattern, size, v)
			if len(got) != size || !bytes.Equal(got[headerBytes:], pattern[v:v+size-headerBytes]) {
				t.Fatalf("size %d, variant %d: body of %d bytes is not the header and the pattern from %d", size, v, len(got), v)
			}
			for name, r := range map[string]io.Reader{"whole": bytes.NewReader(got), "byte by byte": iotest.OneByteReader(bytes.NewReader(got)),
				"with EOF": iotest.DataErrReader(bytes.NewReader(got))} {
				if err := c.check(r); err != nil {
					t.Errorf("size %d, variant %d, %s: %v", size, v, name, err)
				}
			}
		}
	}
}

func TestContentSad(t *testing.T) {
	const size = 100
	pattern := newPattern(1, size)
	good := func() []byte { return bodyOf(t, pattern, size, 5) }
	flipped := good()
	flipped[size-1] ^= 1
	badHeader := good()
	badHeader[7] = 1
	other := bodyOf(t, newPattern(2, size), size, 5) // another seed's pattern
	for _, c := range []struct {
		name string
		body []byte
		want string
	}{
		{"empty", nil, "0 bytes, want 100"},
		{"short header", good()[:5], "5 bytes, want 100"},
		{"short", good()[:size-1], "99 bytes, want 100"},
		{"long", append(good(), 0), "more than 100 bytes"},
		{"a byte flipped", flipped, "variant 5 differs within bytes 8..99"},
		{"no variant", badHeader, "names no variant"},
		{"another pattern", other, "variant 5 differs"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := newChecker(pattern, size).check(bytes.NewReader(c.body))
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("check = %v, want ErrCorrupt saying %q", err, c.want)
			}
		})
	}
	t.Run("connection cut off", func(t *testing.T) {
		cut := io.MultiReader(bytes.NewReader(good()[:50]), iotest.ErrReader(io.ErrUnexpectedEOF))
		if err := newChecker(pattern, size).check(cut); !errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, ErrCorrupt) {
			t.Errorf("check = %v, want the reader's error, not ErrCorrupt", err)
		}
	})
}

// TestNoAllocs checks a client's own work per op allocates nothing: the
// op deal, the body of a write, the check of a read.
func TestNoAllocs(t *testing.T) {
	const size = 4096
	pattern := newPattern(3, size)
	c := newChecker(pattern, size)
	d := newDeck(70)
	rng := rand.New(rand.NewPCG(1, 2))
	var b body
	src := bodyOf(t, pattern, size, 9)
	var r bytes.Reader
	buf := make([]byte, 1000)
	allocs := testing.AllocsPerRun(100, func() {
		d.deal(rng)
		b.set(pattern, size, rng.IntN(variants))
		for {
			if _, err := b.Read(buf); err != nil {
				break
			}
		}
		r.Reset(src)
		if err := c.check(&r); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per op, want 0", allocs)
	}
}
