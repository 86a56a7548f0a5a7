package searchload

import (
	"math/rand/v2"
	"strconv"
	"time"
)

// Events are nginx access-log lines as Filebeat ships them, in the shape of
// Rally's eventdata track (elasticlogs): its nested field names, less the
// constant Filebeat bookkeeping (fileset, input, prospector, beat.version
// and a second copy of the host name and address), which leaves 23 fields
// and about 700 bytes an event, one event per sequence number. Event i is a function of the seed and i alone,
// so which client writes it does not change it, and its timestamp grows
// with i, so the loaded data covers a known span of time for the queries.

// eventBase is the timestamp of event 0; events follow every eventSpacing.
var eventBase = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()

// eventSpacingMs is the log time between two events, in milliseconds: each
// event falls at a random millisecond of its own slot.
const eventSpacingMs = 10

// eventTime returns the first millisecond of event i's slot.
func eventTime(i int64) int64 { return eventBase + i*eventSpacingMs }

// country is where a client address is: its geoip fields and the first
// octet of its addresses.
type country struct {
	iso, name, continent, code string
	city                       string
	lat, lon                   string
	octet                      string
	weight                     int
}

var countries = []country{
	{"US", "United States", "North America", "NA", "Ashburn", "39.0437", "-77.4875", "54", 24},
	{"US", "United States", "North America", "NA", "San Jose", "37.3382", "-121.8863", "23", 10},
	{"DE", "Germany", "Europe", "EU", "Frankfurt am Main", "50.1109", "8.6821", "85", 8},
	{"GB", "United Kingdom", "Europe", "EU", "London", "51.5072", "-0.1276", "81", 7},
	{"FR", "France", "Europe", "EU", "Paris", "48.8566", "2.3522", "90", 6},
	{"NL", "Netherlands", "Europe", "EU", "Amsterdam", "52.3676", "4.9041", "145", 4},
	{"SE", "Sweden", "Europe", "EU", "Stockholm", "59.3293", "18.0686", "78", 2},
	{"PL", "Poland", "Europe", "EU", "Warsaw", "52.2297", "21.0122", "83", 2},
	{"IN", "India", "Asia", "AS", "Bengaluru", "12.9716", "77.5946", "49", 9},
	{"CN", "China", "Asia", "AS", "Beijing", "39.9042", "116.4074", "123", 6},
	{"JP", "Japan", "Asia", "AS", "Tokyo", "35.6762", "139.6503", "126", 5},
	{"SG", "Singapore", "Asia", "AS", "Singapore", "1.3521", "103.8198", "116", 2},
	{"BR", "Brazil", "South America", "SA", "Sao Paulo", "-23.5558", "-46.6396", "177", 4},
	{"AR", "Argentina", "South America", "SA", "Buenos Aires", "-34.6037", "-58.3816", "181", 1},
	{"AU", "Australia", "Oceania", "OC", "Sydney", "-33.8688", "151.2093", "101", 3},
	{"ZA", "South Africa", "Africa", "AF", "Johannesburg", "-26.2041", "28.0473", "105", 1},
	{"CA", "Canada", "North America", "NA", "Toronto", "43.6532", "-79.3832", "99", 4},
	{"RU", "Russia", "Europe", "EU", "Moscow", "55.7558", "37.6173", "95", 2},
}

// agent is a browser or crawler as a user-agent parser reports it.
type agent struct {
	raw                      string
	name, major              string
	os, osName, osMajor, dev string
	weight                   int
}

var agents = []agent{
	{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
		"Chrome", "124", "Windows 10", "Windows 10", "10", "Other", 30},
	{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15",
		"Safari", "17", "Mac OS X 10.15.7", "Mac OS X", "10", "Other", 12},
	{"Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0",
		"Firefox", "125", "Linux", "Linux", "", "Other", 8},
	{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
		"Mobile Safari", "17", "iOS 17.4", "iOS", "17", "iPhone", 14},
	{"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36",
		"Chrome Mobile", "124", "Android 14", "Android", "14", "Pixel 8", 12},
	{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.2478.51",
		"Edge", "124", "Windows 10", "Windows 10", "10", "Other", 7},
	{"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
		"Googlebot", "2", "Other", "Other", "", "Spider", 5},
	{"Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
		"bingbot", "2", "Other", "Other", "", "Spider", 3},
	{"curl/8.5.0", "curl", "8", "Other", "Other", "", "Other", 2},
}

// The site's pages: a section, then a page word, then for some sections
// a numeric id.
var (
	sections = []string{"/guide/en/reference/current/", "/blog/", "/downloads/", "/products/", "/docs/api/v2/",
		"/community/events/", "/static/assets/js/", "/static/assets/css/", "/support/knowledge/", "/"}
	sectionWeights = []int{30, 14, 6, 8, 10, 3, 10, 6, 5, 8}
	pages          = []string{"index", "getting-started", "installation", "configuration", "bulk-api", "search-api",
		"aggregations", "mapping", "query-dsl", "snapshots", "security", "monitoring", "release-notes",
		"pricing", "contact", "cluster-health", "shard-allocation", "ingest-pipelines", "tiered-storage",
		"performance-tuning", "logging", "upgrade-guide", "main.bundle", "vendor.bundle", "theme"}
	referrers = []string{"-", "https://www.google.com/", "https://www.bing.com/search?form=QBLH",
		"https://duckduckgo.com/", "https://news.ycombinator.com/item", "https://www.reddit.com/r/programming/",
		"https://twitter.com/", "https://www.example.com/guide/en/reference/current/index.html"}
	referrerWeights = []int{25, 30, 6, 4, 3, 3, 4, 25}
)

// A response: status, method and protocol, with their weights.
var (
	statuses       = []int{200, 304, 404, 301, 500, 206}
	statusWeights  = []int{78, 10, 6, 3, 1, 2}
	methods        = []string{"GET", "POST", "HEAD", "PUT"}
	methodWeights  = []int{90, 6, 3, 1}
	httpVersions   = []string{"1.1", "2.0", "1.0"}
	versionWeights = []int{60, 38, 2}
)

// weightsOf returns the cumulative weights of items, for pick.
func weightsOf[T any](items []T, weight func(T) int) []int {
	cum := make([]int, len(items))
	total := 0
	for i, it := range items {
		total += weight(it)
		cum[i] = total
	}
	return cum
}

// cumulative returns the running sums of w.
func cumulative(w []int) []int { return weightsOf(w, func(v int) int { return v }) }

var (
	countryCum  = weightsOf(countries, func(c country) int { return c.weight })
	agentCum    = weightsOf(agents, func(a agent) int { return a.weight })
	sectionCum  = cumulative(sectionWeights)
	referrerCum = cumulative(referrerWeights)
	statusCum   = cumulative(statusWeights)
	methodCum   = cumulative(methodWeights)
	versionCum  = cumulative(versionWeights)
)

// pick draws an index with probability proportional to its weight, given
// the cumulative weights (the tables are short: a scan is cheapest).
func pick(rng *rand.Rand, cum []int) int {
	r := rng.IntN(cum[len(cum)-1])
	for i, c := range cum {
		if r < c {
			return i
		}
	}
	return len(cum) - 1
}

// eventGen writes events; it reuses its random state, so appending an event
// allocates nothing. One goroutine uses it.
type eventGen struct {
	seed uint64
	pcg  rand.PCG
	rng  *rand.Rand
	// day is the day of the last timestamp written (days since 1970),
	// dayText its date as timeLayout writes it: most events fall on it.
	day     int64
	dayText []byte
}

func newEventGen(seed uint64) *eventGen {
	g := &eventGen{seed: seed}
	g.rng = rand.New(&g.pcg)
	return g
}

// mix64 spreads a sequence number over 64 bits (SplitMix64's finaliser),
// so neighbouring events start from unrelated random states.
func mix64(i uint64) uint64 {
	z := i + 0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

const timeLayout = "2006-01-02T15:04:05.000Z"

// appendEvent appends event i as one line of JSON (no newline). The
// tables hold no character JSON must escape, so strings go in as they are.
func (g *eventGen) appendEvent(b []byte, i int64) []byte {
	g.pcg.Seed(g.seed, mix64(uint64(i)))
	rng := g.rng
	c := &countries[pick(rng, countryCum)]
	a := &agents[pick(rng, agentCum)]
	ts := eventTime(i) + rng.Int64N(eventSpacingMs)
	host := 1 + rng.IntN(3)

	b = append(b, `{"@timestamp":"`...)
	b = g.appendTimestamp(b, ts)
	b = append(b, `","offset":`...)
	b = strconv.AppendInt(b, rng.Int64N(10_000_000), 10)
	b = append(b, `,"source":"/var/log/nginx/access.log","beat":{"hostname":"`...)
	b = appendHost(b, c.code, host)
	b = appendAll(b, `"},"nginx":{"access":{"agent":"`, a.raw, `","user_agent":{"major":"`, a.major,
		`","os":"`, a.os, `","os_major":"`, a.osMajor, `","name":"`, a.name, `","os_name":"`, a.osName,
		`","device":"`, a.dev, `"},"remote_ip":"`, c.octet)
	for _, n := range [3]int{rng.IntN(256), rng.IntN(256), 1 + rng.IntN(254)} {
		b = append(b, '.')
		b = strconv.AppendInt(b, int64(n), 10)
	}
	b = appendAll(b, `","geoip":{"continent_name":"`, c.continent, `","city_name":"`, c.city,
		`","country_name":"`, c.name, `","country_iso_code":"`, c.iso, `","location":{"lat":`, c.lat, `,"lon":`, c.lon,
		`}},"referrer":"`, referrers[pick(rng, referrerCum)], `","url":"`)
	b = appendURL(b, rng)
	status := statuses[pick(rng, statusCum)]
	b = append(b, `","body_sent":{"bytes":`...)
	b = strconv.AppendInt(b, bodyBytes(rng, status), 10)
	b = append(b, `},"method":"`...)
	b = append(b, methods[pick(rng, methodCum)]...)
	b = append(b, `","response_code":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, `,"http_version":"`...)
	b = append(b, httpVersions[pick(rng, versionCum)]...)
	b = append(b, `"}}}`...)
	return b
}

// appendAll appends the parts in order: an event's template, its literal
// pieces and its values alternating.
func appendAll(b []byte, parts ...string) []byte {
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

const msPerDay = 24 * 60 * 60 * 1000

// appendTimestamp appends epoch millisecond ms as timeLayout does, with the
// date formatted once a day: time's formatting was most of an event's cost.
func (g *eventGen) appendTimestamp(b []byte, ms int64) []byte {
	day, rest := ms/msPerDay, ms%msPerDay
	if rest < 0 {
		day, rest = day-1, rest+msPerDay
	}
	if g.dayText == nil || day != g.day {
		g.day = day
		g.dayText = time.UnixMilli(day*msPerDay).UTC().AppendFormat(g.dayText[:0], "2006-01-02T")
	}
	b = append(b, g.dayText...)
	b = appendDigits(b, rest/3_600_000, 2)
	b = append(b, ':')
	b = appendDigits(b, rest/60_000%60, 2)
	b = append(b, ':')
	b = appendDigits(b, rest/1000%60, 2)
	b = append(b, '.')
	b = appendDigits(b, rest%1000, 3)
	return append(b, 'Z')
}

// appendDigits appends v, below 10^width, in width digits.
func appendDigits(b []byte, v int64, width int) []byte {
	n := len(b) + width
	b = append(b, "000"[:width]...)
	for i := n - 1; v > 0; i-- {
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return b
}

// appendHost appends the web server's name: web-<continent code>-<n>.
func appendHost(b []byte, code string, n int) []byte {
	b = append(b, "web-"...)
	b = append(b, code...)
	b = append(b, '-')
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, ".example.com"...)
}

// appendURL appends a page of the site: a section, a page, and an id in
// the sections that have them.
func appendURL(b []byte, rng *rand.Rand) []byte {
	s := pick(rng, sectionCum)
	b = append(b, sections[s]...)
	b = append(b, pages[rng.IntN(len(pages))]...)
	switch sections[s] {
	case "/blog/", "/community/events/", "/support/knowledge/":
		b = append(b, '-')
		b = strconv.AppendInt(b, int64(rng.IntN(5000)), 10)
	case "/static/assets/js/":
		return append(b, ".js"...)
	case "/static/assets/css/":
		return append(b, ".css"...)
	}
	return append(b, ".html"...)
}

// bodyBytes is the size of the response's body: none for a 304, a small
// error page, else a page or asset of up to 200 kB.
func bodyBytes(rng *rand.Rand, status int) int64 {
	switch status {
	case 304:
		return 0
	case 404, 500, 301:
		return 150 + rng.Int64N(400)
	}
	return 500 + rng.Int64N(200_000)
}

// pickCountry draws a country's ISO code as events do, for term queries.
func pickCountry(rng *rand.Rand) string { return countries[pick(rng, countryCum)].iso }
