package searchload

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// TestEventsDeterministic checks event i depends on the seed and i alone:
// the same from two generators in any order, different under another seed.
func TestEventsDeterministic(t *testing.T) {
	a, b, other := newEventGen(7), newEventGen(7), newEventGen(8)
	for _, i := range []int64{0, 1, 2, 999, 123456789} {
		want := string(a.appendEvent(nil, i))
		b.appendEvent(nil, i+1) // b's state before i must not matter
		if got := string(b.appendEvent(nil, i)); got != want {
			t.Errorf("event %d differs between generators of seed 7:\n%s\n%s", i, got, want)
		}
		if got := string(other.appendEvent(nil, i)); got == want {
			t.Errorf("event %d is the same under seeds 7 and 8", i)
		}
	}
	if string(a.appendEvent(nil, 1)) == string(a.appendEvent(nil, 2)) {
		t.Error("events 1 and 2 are the same")
	}
}

// event is the shape of a generated event, as the index maps it.
type event struct {
	Timestamp string `json:"@timestamp"`
	Offset    *int64 `json:"offset"`
	Source    string `json:"source"`
	Beat      struct {
		Hostname string `json:"hostname"`
	} `json:"beat"`
	Nginx struct {
		Access struct {
			Agent     string `json:"agent"`
			UserAgent struct {
				Name, OS, Device string
			} `json:"user_agent"`
			RemoteIP string `json:"remote_ip"`
			GeoIP    struct {
				Continent string `json:"continent_name"`
				City      string `json:"city_name"`
				Country   string `json:"country_name"`
				ISO       string `json:"country_iso_code"`
				Location  *struct {
					Lat, Lon float64
				} `json:"location"`
			} `json:"geoip"`
			Referrer string `json:"referrer"`
			URL      string `json:"url"`
			BodySent struct {
				Bytes *int64 `json:"bytes"`
			} `json:"body_sent"`
			Method       string `json:"method"`
			ResponseCode int    `json:"response_code"`
			HTTPVersion  string `json:"http_version"`
		} `json:"access"`
	} `json:"nginx"`
}

// leafCount counts the leaves of a decoded JSON value (a list is one).
func leafCount(v any) int {
	m, ok := v.(map[string]any)
	if !ok {
		return 1
	}
	n := 0
	for _, c := range m {
		n += leafCount(c)
	}
	return n
}

// TestEventShape checks many events: valid JSON with every field filled,
// in the size range, timestamps in their own slot.
func TestEventShape(t *testing.T) {
	g := newEventGen(42)
	var buf []byte
	minSize, maxSize, total := 1<<30, 0, 0
	const n = 20000
	for i := range int64(n) {
		buf = g.appendEvent(buf[:0], i)
		if bytes.ContainsAny(buf, "\n\\") {
			t.Fatalf("event %d holds a newline or an escape: %s", i, buf)
		}
		var e event
		if err := json.Unmarshal(buf, &e); err != nil {
			t.Fatalf("event %d: %v\n%s", i, err, buf)
		}
		minSize, maxSize, total = min(minSize, len(buf)), max(maxSize, len(buf)), total+len(buf)
		a := e.Nginx.Access
		ts, err := time.Parse(timeLayout, e.Timestamp)
		if err != nil {
			t.Fatalf("event %d: @timestamp: %v", i, err)
		}
		if ms := ts.UnixMilli(); ms < eventTime(i) || ms >= eventTime(i+1) {
			t.Errorf("event %d: @timestamp %s outside its slot", i, e.Timestamp)
		}
		ip, err := netip.ParseAddr(a.RemoteIP)
		if err != nil || !ip.Is4() {
			t.Errorf("event %d: remote_ip %q", i, a.RemoteIP)
		}
		g := a.GeoIP
		if g.Location == nil || g.Location.Lat < -90 || g.Location.Lat > 90 || g.Location.Lon < -180 || g.Location.Lon > 180 {
			t.Errorf("event %d: geoip location %+v", i, g.Location)
		}
		for name, v := range map[string]string{"source": e.Source, "beat.hostname": e.Beat.Hostname, "agent": a.Agent,
			"user_agent.name": a.UserAgent.Name, "user_agent.os": a.UserAgent.OS, "user_agent.device": a.UserAgent.Device,
			"geoip.continent_name": g.Continent, "geoip.city_name": g.City, "geoip.country_name": g.Country,
			"geoip.country_iso_code": g.ISO, "referrer": a.Referrer, "method": a.Method, "http_version": a.HTTPVersion} {
			if v == "" {
				t.Errorf("event %d: %s empty", i, name)
			}
		}
		if !strings.HasPrefix(a.URL, "/") || e.Offset == nil || a.BodySent.Bytes == nil || a.ResponseCode < 200 || a.ResponseCode > 599 {
			t.Errorf("event %d: url %q, offset %v, bytes %v, response_code %d", i, a.URL, e.Offset, a.BodySent.Bytes, a.ResponseCode)
		}
		if i == 0 {
			var v any
			json.Unmarshal(buf, &v)
			if got := leafCount(v); got != 24 {
				t.Errorf("an event has %d leaves, want 24: 23 fields, the location's lat and lon two leaves", got)
			}
		}
	}
	if minSize < 550 || maxSize > 850 {
		t.Errorf("events are %d to %d bytes, want within 550..850", minSize, maxSize)
	}
	if mean := total / n; mean < 600 || mean > 800 {
		t.Errorf("events are %d bytes on average, want 600..800", mean)
	}
	t.Logf("events: %d to %d bytes, %d on average", minSize, maxSize, total/n)
}

// TestAppendEventAllocatesNothing checks the generator's hot path: an
// event into a buffer with room allocates nothing.
func TestAppendEventAllocatesNothing(t *testing.T) {
	g := newEventGen(1)
	buf := make([]byte, 0, 4096)
	i := int64(0)
	if n := testing.AllocsPerRun(1000, func() { buf = g.appendEvent(buf[:0], i); i++ }); n != 0 {
		t.Errorf("appendEvent allocates %v times per event", n)
	}
}

func BenchmarkAppendEvent(b *testing.B) {
	g := newEventGen(1)
	buf := make([]byte, 0, 4096)
	var i int64
	for b.Loop() {
		buf = g.appendEvent(buf[:0], i)
		i++
	}
	b.SetBytes(int64(len(buf)))
}

// TestAppendTimestamp checks the cached-date formatting against time's,
// across days, years and before 1970.
func TestAppendTimestamp(t *testing.T) {
	g := newEventGen(1)
	for _, ms := range []int64{0, 1, 999, 59_999, msPerDay - 1, msPerDay, eventBase, eventBase + 86_399_999,
		time.Date(2024, 12, 31, 23, 59, 59, 999e6, time.UTC).UnixMilli(), time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli(), -1, -msPerDay - 5} {
		want := time.UnixMilli(ms).UTC().Format(timeLayout)
		if got := string(g.appendTimestamp(nil, ms)); got != want {
			t.Errorf("appendTimestamp(%d) = %s, want %s", ms, got, want)
		}
	}
}
