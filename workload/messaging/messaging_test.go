package messaging

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/workload/workloadtest"
)

func newTest(t *testing.T, overrides map[string]string) *Workload {
	t.Helper()
	w, err := Spec().Build(overrides)
	if err != nil {
		t.Fatal(err)
	}
	return w.(*Workload)
}

// TestParams checks the defaults, what follows from them, and that bad
// values are refused with the parameter, the value and why.
func TestParams(t *testing.T) {
	w := newTest(t, nil)
	if w.services != 128 || w.bytes != 2048 || w.routes != 4 || w.ObjectsPerMessage() != 5 || w.CommitsPerMessage() != 10 {
		t.Errorf("defaults: %d services, %d bytes, %d routes, %d objects, %d commits; want 128, 2048, 4, 5, 10",
			w.services, w.bytes, w.routes, w.ObjectsPerMessage(), w.CommitsPerMessage())
	}
	if m := Spec().Metric; m == nil || m.Op != OpInbound || m.PerMinute {
		t.Errorf("Metric = %+v, want inbound messages per second", m)
	}
	if v, _ := Spec().Resolve(nil); v.Text(pServices) != "128" || v.Has(pSeed) || len(v.Map()) != len(Spec().Params)-1 {
		t.Errorf("recorded parameters %v", v.Map())
	}
	w = newTest(t, map[string]string{pTransform: "2", pOutbound: " 2", pServices: "1", pBytes: "1024"})
	if w.routes != 2 || w.ObjectsPerMessage() != 3 || w.CommitsPerMessage() != 6 || len(w.idle) != 1 || w.bytes != 1024 {
		t.Errorf("2 routes, 1 service: %d routes, %d objects, %d commits, %d idle services, %d bytes", w.routes, w.ObjectsPerMessage(), w.CommitsPerMessage(), len(w.idle), w.bytes)
	}
	w = newTest(t, map[string]string{pBytes: "1MiB", pTransform: "32", pOutbound: "32", pSeed: "7"})
	if w.bytes != maxBytes || w.routes != maxRoutes || w.seed != 7 {
		t.Errorf("largest: %d bytes, %d routes, seed %d", w.bytes, w.routes, w.seed)
	}
	for _, tc := range []struct {
		name      string
		overrides map[string]string
		want      string
	}{
		{"no services", map[string]string{pServices: "0"}, `workload messaging: services 0 is out of range: it must be from 1 to 100000`},
		{"too many services", map[string]string{pServices: "100001"}, `services 100001 is out of range: it must be from 1 to 100000`},
		{"services not a number", map[string]string{pServices: "many"}, `services "many" is not a whole number`},
		{"message too small", map[string]string{pBytes: "512"}, `message_bytes 512 is out of range: it must be from 1024 to 1048576`},
		{"message too big", map[string]string{pBytes: "2MiB"}, `message_bytes 2MiB is out of range`},
		{"message not a size", map[string]string{pBytes: "long"}, `message_bytes "long" is not a size`},
		{"no transforms", map[string]string{pTransform: "0", pOutbound: "0"}, `outbound 0 is out of range: it must be from 1 to 32`},
		{"too many routes", map[string]string{pTransform: "33", pOutbound: "32"}, `transforms 33 is out of range: it must be from 1 to 32`},
		{"outbound not a number", map[string]string{pOutbound: "four"}, `outbound "four" is not a whole number`},
		{"unequal routes", map[string]string{pTransform: "3"}, "workload messaging: transforms 3 and outbound 4: each route transforms the message once and sends it to one outbound interface, so they must be equal"},
		{"bad seed", map[string]string{pSeed: "x"}, `seed "x" is not a whole number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Spec().Build(tc.overrides)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New(%v) = %v, want an error with %q", tc.overrides, err, tc.want)
			}
		})
	}
}

// TestParamsCheck: every declared parameter is a setting that can work.
func TestParamsCheck(t *testing.T) {
	for _, p := range Spec().Params {
		if err := p.Check(); err != nil {
			t.Error(err)
		}
	}
}

// segments splits an HL7 message into its segments, each without its
// carriage return, and fails t when the text does not end with one.
func segments(t *testing.T, msg []byte) [][]byte {
	t.Helper()
	if !bytes.HasSuffix(msg, []byte{segmentEnd}) {
		t.Fatalf("message does not end with a segment terminator: %q", msg)
	}
	return bytes.Split(msg[:len(msg)-1], []byte{segmentEnd})
}

// TestGenerator checks that a message is a function of seed, service and
// sequence number alone, is exactly message_bytes long, printable, and
// made of MSH, PID, PV1, OBR, at least two OBX and a closing NTE.
func TestGenerator(t *testing.T) {
	g, other := newGenerator(), newGenerator()
	for _, size := range []int{minBytes, 2048, 4096, 1 << 16} {
		a := g.message(nil, 7, 3, 41, size)
		other.message(nil, 7, 4, 41, size) // other's state must not matter
		if b := other.message(nil, 7, 3, 41, size); !bytes.Equal(a, b) {
			t.Errorf("size %d: the same seed, service and sequence gave two messages:\n%q\n%q", size, a, b)
		}
		if len(a) != size {
			t.Errorf("size %d: message of %d bytes", size, len(a))
		}
		for _, c := range a {
			if (c < ' ' || c > '~') && c != segmentEnd {
				t.Fatalf("size %d: byte %q in %q", size, c, a)
			}
		}
		segs := segments(t, a)
		var names []string
		obx := 0
		for _, s := range segs {
			name, _, _ := bytes.Cut(s, []byte{fieldSep})
			names = append(names, string(name))
			if string(name) == "OBX" {
				obx++
			}
		}
		head := strings.Join(names[:4], " ")
		if head != "MSH PID PV1 OBR" || names[len(names)-1] != "NTE" || obx < minOBX || obx != len(names)-5 {
			t.Errorf("size %d: segments %v", size, names)
		}
		if !bytes.HasPrefix(a, []byte("MSH|^~\\&|LAB3|HOSP|ROUTER|HOSP|")) || !bytes.Contains(segs[0], []byte("|ORU^R01^ORU_R01|S3-41|P|2.5.1")) {
			t.Errorf("size %d: MSH %q", size, segs[0])
		}
		if size == 2048 {
			t.Logf("%d OBX in %d bytes:\n%s", obx, size, bytes.ReplaceAll(a, []byte{segmentEnd}, []byte{'\n'}))
		}
	}
	base := g.message(nil, 7, 3, 41, 2048)
	for _, tc := range []struct {
		name    string
		seed    uint64
		service int
		seq     int64
	}{{"seed", 8, 3, 41}, {"service", 7, 4, 41}, {"sequence", 7, 3, 42}} {
		if bytes.Equal(g.message(nil, tc.seed, tc.service, tc.seq, 2048), base) {
			t.Errorf("another %s gave the same message", tc.name)
		}
	}
	if got := g.message([]byte("kept"), 7, 3, 41, 2048); !bytes.Equal(got[4:], base) || string(got[:4]) != "kept" {
		t.Errorf("message does not append to dst")
	}
}

// TestTransform checks that each route rewrites exactly four segments of
// a message (MSH, PID, PV1 and the route's OBX) as documented, copies the
// others, and that no two routes send the same text.
func TestTransform(t *testing.T) {
	in := newGenerator().message(nil, 1, 0, 1, 2048)
	src := segments(t, in)
	obxs := 0
	for _, s := range src {
		if bytes.HasPrefix(s, []byte("OBX|")) {
			obxs++
		}
	}
	field := func(seg []byte, i int) string { return string(bytes.Split(seg, []byte{fieldSep})[i]) }
	seen := map[string]int{}
	for route := 1; route <= 6; route++ {
		outMsg := transform(nil, in, route)
		if r, ok := seen[string(outMsg)]; ok {
			t.Errorf("routes %d and %d send the same message", r, route)
		}
		seen[string(outMsg)] = route
		out := segments(t, outMsg)
		if len(out) != len(src) {
			t.Fatalf("route %d: %d segments, want %d", route, len(out), len(src))
		}
		var changed []string
		for i := range src {
			if !bytes.Equal(src[i], out[i]) {
				changed = append(changed, field(src[i], 0)+"#"+field(src[i], 1))
			}
		}
		wantOBX := (route-1)%obxs + 1
		want := []string{"MSH#^~\\&", "PID#1", "PV1#1", "OBX#" + strconv.Itoa(wantOBX)}
		if strings.Join(changed, " ") != strings.Join(want, " ") {
			t.Errorf("route %d rewrote %v, want %v", route, changed, want)
		}
		msh := out[0]
		r := strconv.Itoa(route)
		if field(msh, 2) != "ROUTER" || field(msh, 4) != "OUT"+r || field(msh, 5) != "DEST"+r || field(msh, 9) != field(src[0], 9)+"-"+r {
			t.Errorf("route %d: MSH %q", route, msh)
		}
		name := strings.Split(field(src[1], 5), "^")
		rot := 1 + (route-1)%2
		if got := field(out[1], 5); got != strings.Join(append(name[rot:], name[:rot]...), "^") {
			t.Errorf("route %d: PID-5 %q from %q", route, got, field(src[1], 5))
		}
		if got, was := field(out[2], 2), field(src[2], 2); got != patientClass[was] {
			t.Errorf("route %d: PV1-2 %q from %q", route, got, was)
		}
		obx := out[3+wantOBX]
		code, _, _ := strings.Cut(field(src[3+wantOBX], 3), "^")
		if got := field(obx, 3); !strings.HasPrefix(got, "R"+r+"-"+strings.ReplaceAll(code, "-", "")+"^") || !strings.HasSuffix(got, "^99LOC") {
			t.Errorf("route %d: OBX-3 %q from %q", route, got, field(src[3+wantOBX], 3))
		}
	}
}

// TestNotSQL checks the messages on a key-value engine.
func TestNotSQL(t *testing.T) {
	workloadtest.CheckNotSQL(t, newTest(t, nil))
}
