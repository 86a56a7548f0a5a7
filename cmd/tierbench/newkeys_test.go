package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/results"
)

// capacityStudy is a valid capacity study (validate accepts it as it is)
// whose pieces the cases of TestRefusesNewKeysBadInput replace: TIER is
// the disk tier's keys after its path, SLO, NEED and SEARCH the capacity
// keys, EXTRA more keys; DISK becomes the tier's folder. The tier takes
// its latency from the profile file dev.yaml beside the study, PROFILE.
const capacityStudy = `name: newkeys
engine: pebble
tiers:
  disk: {path: DISKTIER}
placements:
  all-disk: {data: disk, wal: disk}
durability: [sync]
workload: {name: ycsb-a}
clients: [1]
duration: 1s
SLO
NEED
SEARCH
EXTRA
`

// goodProfile is a valid profile file, the default of PROFILE.
const goodProfile = `name: dev
device: a test device
latency:
  fsync: {p50: 1ms, p99: 2ms}
fsync_at_once:
  - {syncs: 4, p50: 2ms, p99: 4ms}
iops: {read: 1000, write: 1000}
durability: synced
source: a test
`

// newKeyCase is one bad input of the keys capacity, cost, profiles,
// steady warmups and live metrics brought.
type newKeyCase struct {
	name string
	// Replacements of capacityStudy's pieces; "-" leaves the key out.
	tier, slo, need, search, extra, profile string
	// study, when set, is the whole study instead.
	study string
	want  []string // fragments of stderr
}

// TestRefusesNewKeysBadInput is issue 59's table of bad values of the
// newest keys (slo, need, search, target_rate lists, cost, size, profile
// files, emulate, warmup: {steady}) and YAML oddities on them: each is
// refused by validate and by run with exit code 2 and one problem naming
// the fix, before anything is created (see refused). It logs how many
// of its cases were refused, the figure issue 59's closing note gives.
func TestRefusesNewKeysBadInput(t *testing.T) {
	cases := []newKeyCase{
		// slo: the bound of one percentile.
		{name: "slo zero", slo: "slo: {p99: 0ms}", want: []string{"slo p99 0ms must be above 0 and at most 1m"}},
		{name: "slo negative", slo: "slo: {p99: -5ms}", want: []string{"slo p99 -5ms must be above 0 and at most 1m"}},
		{name: "slo NaN", slo: "slo: {p99: NaN}", want: []string{`slo p99 "NaN" is not a latency`}},
		{name: "slo NaN with a unit", slo: "slo: {p99: NaNms}", want: []string{`slo p99 "NaNms" is not a latency`}},
		{name: "slo huge", slo: "slo: {p99: 9999999h}", want: []string{`slo p99 "9999999h" is not a latency`}},
		{name: "slo above a minute", slo: "slo: {p99: 61s}", want: []string{"slo p99 61s must be above 0 and at most 1m"}},
		{name: "slo p99.9 zero", slo: "slo: {p99.9: 0s}", want: []string{"slo p99.9 0s must be above 0 and at most 1m"}},
		{name: "slo p99.99", slo: "slo: {p99.99: 20ms}", want: []string{`unknown key "p99.99" in slo; did you mean "p99.9"?`}},
		{name: "slo p100", slo: "slo: {p100: 20ms}", want: []string{`unknown key "p100" in slo`}},
		{name: "slo p999 for p99.9", slo: "slo: {p999: 20ms}", want: []string{`unknown key "p999" in slo; did you mean "p99.9"?`}},
		{name: "slo two percentiles", slo: "slo: {p99: 20ms, p50: 5ms}", want: []string{"slo bounds one percentile, and has p99 and p50"}},
		{name: "slo errors only", slo: "slo: {errors: 1%}", want: []string{"slo bounds no latency percentile"}},
		{name: "slo errors NaN", slo: "slo: {p99: 20ms, errors: NaN%}", want: []string{`slo errors "NaN%" is not a percentage from 0% to below 100%`}},
		{name: "slo errors negative", slo: "slo: {p99: 20ms, errors: -1%}", want: []string{`slo errors "-1%" is not a percentage`}},
		{name: "slo errors 100%", slo: "slo: {p99: 20ms, errors: 100%}", want: []string{`slo errors "100%" is not a percentage`}},
		{name: "slo empty mapping", slo: "slo: {}", want: []string{"slo bounds no latency percentile"}},
		{name: "slo empty", slo: "slo:", want: []string{"slo has no value"}},
		{name: "slo a list for a map", slo: "slo: [p99, 20ms]", want: []string{"slo must be a mapping of key: value pairs, not a list"}},
		{name: "slo a bare duration", slo: "slo: 20ms", want: []string{`slo must be a mapping of key: value pairs, not the value "20ms"`}},
		{name: "slo duplicate percentile", slo: "slo: {p99: 20ms, p99: 1h}", want: []string{`duplicate key "p99" in slo (first at line 11)`}},
		{name: "slo deep nesting", slo: "slo: {p99: " + strings.Repeat("{a: ", 200) + "1" + strings.Repeat("}", 200) + "}", want: []string{"p99 must be a single value, not a mapping"}},
		{name: "slo nested past YAML's depth", slo: "slo: {p99: " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "}", want: []string{"YAML syntax error: exceeded max depth of 10000; a study nests a few levels deep"}},
		{name: "slo twice", slo: "slo: {p99: 20ms}\nslo: {p99: 5s}", want: []string{`duplicate key "slo" in the study (first at line 11)`}},
		{name: "slo alias of a list", slo: "slo: *l", study: strings.Replace(capacityStudy, "clients: [1]", "clients: &l [1]", 1),
			want: []string{"slo must be a mapping of key: value pairs, not a list"}},
		{name: "slo alias of a cost", tier: ", cost: &c {per_month: 5}", slo: "slo: *c", want: []string{`unknown key "per_month" in slo`}},

		// Aliases, merges and repeats on every new key: each refused as the
		// value it brings in, at its own line.
		{name: "need an alias of a mapping", tier: ", cost: &c {per_month: 5}", need: "need: *c", want: []string{"need must be a single value, not a mapping"}},
		{name: "need twice", need: "need: 1000\nneed: 2000", want: []string{`duplicate key "need" in the study (first at line 12)`}},
		{name: "search an alias of a list", search: "search: *l", study: strings.Replace(capacityStudy, "clients: [1]", "clients: &l [1]", 1),
			want: []string{"search must be a mapping of key: value pairs, not a list"}},
		{name: "search merging a list of values", search: "search: {<<: *l}", study: strings.Replace(capacityStudy, "clients: [1]", "clients: &l [1]", 1),
			want: []string{"merge (<<) in search must name mappings, not the value \"1\""}},
		{name: "search merging a bad value", tier: ", cost: &c {per_month: 5}", search: "search: {<<: *c}", want: []string{`unknown key "per_month" in search`}},
		{name: "cost an alias of a scalar", tier: ", cost: *n", study: strings.Replace(capacityStudy, "name: newkeys", "name: &n newkeys", 1),
			want: []string{`tier "disk" cost must be a mapping of key: value pairs, not the value "newkeys"`}},
		{name: "size an alias of the slo", tier: ", cost: {per_gib_month: 0.1}", slo: "slo: &s {p99: 20ms}", extra: "size: *s", want: []string{`size: unknown component "p99"`}},
		{name: "target_rate an alias of a mapping", slo: "-", need: "-", search: "-", tier: ", latency: &m {fsync: 1ms}", extra: "target_rate: *m",
			want: []string{"target_rate must be a single value, not a mapping"}},
		{name: "warmup an alias of a list", slo: "-", need: "-", search: "-", extra: "warmup: *l", study: strings.Replace(capacityStudy, "clients: [1]", "clients: &l [1]", 1),
			want: []string{"warmup must be a single value, not a list"}},
		{name: "host cost nested deep", tier: ", cost: {per_month: 5}", extra: "host: {cost: " + strings.Repeat("{a: ", 100) + "1" + strings.Repeat("}", 100) + "}",
			want: []string{`unknown key "a" in host cost`}},
		{name: "profile an alias of a mapping", study: strings.Replace(capacityStudy, "disk: {path: DISKTIER}", "fast: {path: DISK2, latency: &m {fsync: 1ms}}\n  disk: {path: DISK, profile: *m}", 1),
			want: []string{"profile must be a single value, not a mapping"}},

		// need: the rate the answer must carry.
		{name: "need zero", need: "need: 0", want: []string{`need "0" is not a rate above 0`}},
		{name: "need negative", need: "need: -100", want: []string{`need "-100" is not a rate above 0`}},
		{name: "need NaN", need: "need: .nan", want: []string{`need ".nan" is not a rate above 0`}},
		{name: "need infinite", need: "need: .inf", want: []string{`need ".inf" is not a rate above 0`}},
		{name: "need huge", need: "need: 1e300", want: []string{"need 1e+300 ops/s is above search max 100000"}},
		{name: "need above search max", need: "need: 200000", want: []string{"need 200000 ops/s is above search max 100000"}},
		{name: "need below the least rate", need: "need: 0.001", want: []string{"need 0.001 ops/s is below 1 ops/s"}},
		{name: "need a list", need: "need: [1000, 2000]", want: []string{"need must be a single value, not a list"}},
		{name: "need with a unit", need: "need: 20k", want: []string{`need "20k" is not a rate above 0`}},

		// search: from, max and resolution at their edges.
		{name: "search from zero", search: "search: {from: 0}", want: []string{`search from "0" is not a rate of at least 1 ops/s`}},
		{name: "search from NaN", search: "search: {from: NaN}", want: []string{`search from "NaN" is not a rate`}},
		{name: "search max infinite", search: "search: {max: .inf}", want: []string{`search max ".inf" is not a rate`}},
		{name: "search max huge", search: "search: {max: 1e300}", want: []string{"search max 1e+300 is more than 1e+09 ops/s"}},
		{name: "search from huge", search: "search: {from: 2e9}", want: []string{"search from 2e+09 is more than 1e+09 ops/s"}},
		{name: "search from above max", search: "search: {from: 5000, max: 1000}", want: []string{"search from 5000 is above its max 1000"}},
		{name: "search resolution zero", search: "search: {resolution: 0%}", want: []string{`search resolution "0%" must be a percentage from 1% to 50%`}},
		{name: "search resolution below 1%", search: "search: {resolution: 0.5%}", want: []string{`search resolution "0.5%" must be a percentage from 1% to 50%`}},
		{name: "search resolution above 50%", search: "search: {resolution: 51%}", want: []string{`search resolution "51%" must be a percentage`}},
		{name: "search resolution without %", search: "search: {resolution: 0.05}", want: []string{`search resolution "0.05" must be a percentage`}},
		{name: "search resolution NaN", search: "search: {resolution: NaN%}", want: []string{`search resolution "NaN%" must be a percentage`}},
		{name: "search a scalar for a map", search: "search: 1000", want: []string{`search must be a mapping of key: value pairs, not the value "1000"`}},
		{name: "search a list for a map", search: "search: [1000, 100000]", want: []string{"search must be a mapping of key: value pairs, not a list"}},
		{name: "search duplicate from", search: "search: {from: 100, from: 1e9}", want: []string{`duplicate key "from" in search`}},
		{name: "search unknown key", search: "search: {start: 100}", want: []string{`unknown key "start" in search`}},
		{name: "search empty", search: "search: {}", want: []string{"search sets nothing"}},
		{name: "search without slo", slo: "-", need: "-", search: "search: {from: 100}", want: []string{"search is for a capacity study"}},

		// target_rate lists (an open-loop study: no slo).
		{name: "target_rate empty list", slo: "-", need: "-", search: "-", extra: "target_rate: []", want: []string{"target_rate is empty"}},
		{name: "target_rate listed twice", slo: "-", need: "-", search: "-", extra: "target_rate: [1000, 1000]", want: []string{"target_rate 1000 is listed twice"}},
		{name: "target_rate list with a negative", slo: "-", need: "-", search: "-", extra: "target_rate: [1000, -1]", want: []string{"target_rate must be more than 0, got -1"}},
		{name: "target_rate list with NaN", slo: "-", need: "-", search: "-", extra: "target_rate: [1000, .nan]", want: []string{`target_rate ".nan" is not a number`}},
		{name: "target_rate list with a list", slo: "-", need: "-", search: "-", extra: "target_rate: [1000, [2000]]", want: []string{"each target_rate entry must be a single value, not a list"}},
		{name: "target_rate list with an empty entry", slo: "-", need: "-", search: "-", extra: "target_rate: [1000, ~]", want: []string{"target_rate has an empty entry"}},
		{name: "target_rate huge", slo: "-", need: "-", search: "-", extra: "target_rate: 1e300", want: []string{"target_rate 1e300 is more than 1e+09 ops/s"}},
		{name: "target_rate below one op a second", slo: "-", need: "-", search: "-", extra: "target_rate: 0.001", want: []string{"target_rate 0.001 starts less than one operation in duration 1s; give at least 1 ops/s"}},
		{name: "target_rate a map", slo: "-", need: "-", search: "-", extra: "target_rate: {a: 1}", want: []string{"target_rate must be a single value, not a mapping"}},
		{name: "target_rate list past the runs bound", slo: "-", need: "-", search: "-", extra: "repeat: 100\ntarget_rate: [" + rateList(1001) + "]",
			want: []string{"the study has more than 100000 runs (1 placements x 1001 swept combinations x 1 durability x 1 client counts x 100 rounds)"}},
		{name: "target_rate with slo", extra: "target_rate: [1000, 2000]", want: []string{"target_rate: a capacity study (slo) searches the rate itself"}},

		// cost on tiers and the host.
		{name: "tier cost negative", tier: ", cost: {per_gib_month: -1}", want: []string{`tier "disk" cost per_gib_month "-1" is not a price tierbench can read`}},
		{name: "tier cost NaN", tier: ", cost: {per_month: .nan}", want: []string{`tier "disk" cost per_month ".nan" is not a price`}},
		{name: "tier cost infinite", tier: ", cost: {per_month: $Inf}", want: []string{`tier "disk" cost per_month "$Inf" is not a price`}},
		{name: "tier cost huge", tier: ", cost: {per_month: 1e300}", want: []string{`tier "disk" cost per_month 1e300 is more than 1e+09 a month`}},
		{name: "tier cost empty", tier: ", cost: {}", want: []string{`tier "disk" cost sets no price`}},
		{name: "tier cost a scalar", tier: ", cost: 25", want: []string{`tier "disk" cost must be a mapping of key: value pairs, not the value "25"`}},
		{name: "tier cost a list", tier: ", cost: [25]", want: []string{`tier "disk" cost must be a mapping of key: value pairs, not a list`}},
		{name: "tier cost duplicate key", tier: ", cost: {per_month: 1, per_month: 2}", want: []string{`duplicate key "per_month" in tier "disk" cost`}},
		{name: "tier cost two currency symbols", tier: ", cost: {per_month: $€5}", want: []string{`tier "disk" cost per_month "$€5" is not a price`}},
		{name: "mixed currencies within a tier", tier: ", cost: {per_month: $5, per_gib_month: €0.1}", want: []string{`tier "disk" cost €0.1 is in €, and an earlier price in $; give every price in one currency`}},
		{name: "mixed currencies of tier and host", tier: ", cost: {per_month: $5}", extra: "host: {cost: {per_month: £300}}", want: []string{"host cost £300 is in £, and an earlier price in $"}},
		{name: "host cost negative", tier: ", cost: {per_month: 5}", extra: "host: {cost: {per_month: -300}}", want: []string{`host cost per_month "-300" is not a price`}},
		{name: "host cost huge", tier: ", cost: {per_month: 5}", extra: "host: {cost: {per_month: 9e99}}", want: []string{"host cost per_month 9e99 is more than 1e+09 a month"}},
		{name: "host a list for a map", tier: ", cost: {per_month: 5}", extra: "host: [cost]", want: []string{"host must be a mapping of key: value pairs, not a list"}},
		{name: "host cost nested too deep", tier: ", cost: {per_month: 5}", extra: "host: {cost: {per_month: {per_month: 5}}}", want: []string{"per_month must be a single value, not a mapping"}},
		{name: "host empty", tier: ", cost: {per_month: 5}", extra: "host: {}", want: []string{"host sets nothing"}},
		{name: "cost without slo", slo: "-", need: "-", search: "-", tier: ", cost: {per_month: 5}", want: []string{`tier "disk": cost prices placements for a capacity study's decision`}},

		// size of components.
		{name: "size zero", tier: ", cost: {per_gib_month: 0.1}", extra: "size: {wal: 0}", want: []string{"size of wal:"}},
		{name: "size negative", tier: ", cost: {per_gib_month: 0.1}", extra: "size: {wal: -1GiB}", want: []string{"size of wal:"}},
		{name: "size huge", tier: ", cost: {per_gib_month: 0.1}", extra: "size: {wal: 7EiB}", want: []string{"size of wal 7EiB is more than 1 EiB"}},
		{name: "size past int64", tier: ", cost: {per_gib_month: 0.1}", extra: "size: {wal: 100EiB}", want: []string{"size of wal:"}},
		{name: "size unknown component", tier: ", cost: {per_gib_month: 0.1}", extra: "size: {journal: 1GiB}", want: []string{`size: unknown component "journal"`}},
		{name: "size a list for a map", tier: ", cost: {per_gib_month: 0.1}", extra: "size: [16GiB]", want: []string{"size must be a mapping of key: value pairs, not a list"}},
		{name: "size duplicate component", tier: ", cost: {per_gib_month: 0.1}", extra: "size: {wal: 1GiB, wal: 2GiB}", want: []string{`duplicate key "wal" in size`}},
		{name: "size empty", tier: ", cost: {per_gib_month: 0.1}", extra: "size: {}", want: []string{"size sets nothing"}},
		{name: "size without a cost", extra: "size: {wal: 1GiB}", want: []string{"size prices components, and no tier has a cost"}},

		// Profile files' contents.
		{name: "profile p99 below p50", tier: ", profile: ./dev.yaml", profile: strings.Replace(goodProfile, "{p50: 1ms, p99: 2ms}", "{p50: 2ms, p99: 1ms}", 1),
			want: []string{"latency fsync p99 1ms is below its p50 2ms"}},
		{name: "profile negative latency", tier: ", profile: ./dev.yaml", profile: strings.Replace(goodProfile, "p50: 1ms", "p50: -1ms", 1),
			want: []string{`latency "-1ms" is not a duration between 0 and 1m`}},
		{name: "profile latency past a minute", tier: ", profile: ./dev.yaml", profile: strings.Replace(goodProfile, "p99: 2ms", "p99: 2h", 1),
			want: []string{`latency "2h" is not a duration between 0 and 1m`}},
		{name: "profile fsync_at_once of one writer", tier: ", profile: ./dev.yaml", profile: strings.Replace(goodProfile, "syncs: 4", "syncs: 1", 1),
			want: []string{"fsync_at_once: syncs 1 must be above 1"}},
		{name: "profile fsync_at_once negative", tier: ", profile: ./dev.yaml", profile: strings.Replace(goodProfile, "syncs: 4", "syncs: -4", 1),
			want: []string{"fsync_at_once: syncs -4 must be above 1"}},
		{name: "profile fsync_at_once huge", tier: ", profile: ./dev.yaml", profile: strings.Replace(goodProfile, "syncs: 4", "syncs: 100000000", 1),
			want: []string{"fsync_at_once: syncs 100000000 is more than 1024"}},
		{name: "profile fsync_at_once past int", tier: ", profile: ./dev.yaml", profile: strings.Replace(goodProfile, "syncs: 4", "syncs: 99999999999999999999", 1),
			want: []string{"not a profile"}},
		{name: "profile fsync_at_once falling", tier: ", profile: ./dev.yaml", profile: strings.Replace(goodProfile, "  - {syncs: 4, p50: 2ms, p99: 4ms}", "  - {syncs: 4, p50: 2ms}\n  - {syncs: 3, p50: 3ms}", 1),
			want: []string{"fsync_at_once: syncs 3 must be above 4"}},
		{name: "profile iops NaN", tier: ", profile: ./dev.yaml", profile: strings.Replace(goodProfile, "read: 1000,", "read: .nan,", 1),
			want: []string{"iops read NaN is not a number from 0 to 1e+09"}},
		{name: "profile iops negative", tier: ", profile: ./dev.yaml", profile: strings.Replace(goodProfile, "write: 1000}", "write: -5}", 1),
			want: []string{"iops write -5 is not a number from 0 to 1e+09"}},
		{name: "profile bandwidth huge", tier: ", profile: ./dev.yaml", profile: goodProfile + "bandwidth_mib_s: {read: 1e300}\n",
			want: []string{"bandwidth_mib_s read 1e+300 is not a number from 0 to 1e+09"}},
		{name: "profile duplicate key", tier: ", profile: ./dev.yaml", profile: goodProfile + "durability: none\n",
			want: []string{`not a profile: line 10: mapping key "durability" already defined at line 8; see the profile files`}},
		{name: "profile a list for a map", tier: ", profile: ./dev.yaml", profile: strings.Replace(goodProfile, "iops: {read: 1000, write: 1000}", "iops: [1000, 1000]", 1),
			want: []string{"not a profile"}},
		{name: "profile alias bomb", tier: ", profile: ./dev.yaml", profile: goodProfile + profileAliasBomb(),
			want: []string{"not a profile"}},
		{name: "profile deep nesting", tier: ", profile: ./dev.yaml", profile: goodProfile + "assumed: " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n",
			want: []string{"not a profile"}},
		{name: "profile name with an ANSI escape", tier: ", profile: ./dev.yaml", profile: strings.Replace(goodProfile, "name: dev", `name: "\e[2Jdev"`, 1),
			want: []string{`name "\x1b[2Jdev" must be one word of letters, digits`}},
		{name: "profile device with a right-to-left override", tier: ", profile: ./dev.yaml", profile: strings.Replace(goodProfile, "device: a test device", `device: "a \u202Edevice"`, 1),
			want: []string{`device "a \u202edevice" holds a control or bidirectional character (U+202E)`}},
		{name: "profile two documents", tier: ", profile: ./dev.yaml", profile: goodProfile + "---\nname: other\n",
			want: []string{"holds a second YAML document"}},

		// emulate on kinds that cannot.
		{name: "emulate syscall on pmem_emulated", study: strings.Replace(capacityStudy, "disk: {path: DISKTIER}", "disk: {pmem_emulated: {size: 64MiB}, latency: {fsync: 1ms}, emulate: syscall}", 1),
			want: []string{`tier "disk": a pmem_emulated tier is always served through the power-loss layer`}},
		{name: "emulate syscall with read latency", tier: ", latency: {read: 1ms, fsync: 1ms}, emulate: syscall", want: []string{`tier "disk": emulate: syscall delays only syncs, and latency asks for read or write delays too`}},
		{name: "emulate on a storage_class tier", study: strings.Replace(capacityStudy, "disk: {path: DISKTIER}", "disk: {storage_class: fast, latency: {fsync: 1ms}, emulate: fuse}", 1),
			want: []string{`tier "disk": emulate is not supported on a storage_class tier`}},
		{name: "emulate without latency", tier: ", emulate: fuse", want: []string{`tier "disk": emulate says how a latency or profile is applied, and the tier has neither`}},
		{name: "emulate unknown", tier: ", latency: {fsync: 1ms}, emulate: ebpf", want: []string{`tier "disk": unknown emulate "ebpf"`}},
		{name: "emulate a list", tier: ", latency: {fsync: 1ms}, emulate: [fuse, syscall]", want: []string{"emulate must be a single value, not a list"}},

		{name: "emulate syscall under the power-loss layer", slo: "-", need: "-", search: "-", tier: ", latency: {fsync: 1ms}, emulate: syscall", extra: "crash: power",
			want: []string{"crash: power puts tier disk under the power-loss layer, a FUSE layer, and the tier asks for emulate: syscall"}},

		// warmup: {steady} at its edges (closed loop: no slo).
		{name: "steady zero", slo: "-", need: "-", search: "-", extra: "warmup: {steady: 0%}", want: []string{`warmup steady "0%" must be a percentage above 0% and below 100%`}},
		{name: "steady 100%", slo: "-", need: "-", search: "-", extra: "warmup: {steady: 100%}", want: []string{`warmup steady "100%" must be a percentage above 0% and below 100%`}},
		{name: "steady negative", slo: "-", need: "-", search: "-", extra: "warmup: {steady: -5%}", want: []string{`warmup steady "-5%" must be a percentage`}},
		{name: "steady too fine", slo: "-", need: "-", search: "-", extra: "warmup: {steady: 0.0001%}", want: []string{`warmup steady "0.0001%" is below 0.1%`}},
		{name: "steady window one interval", slo: "-", need: "-", search: "-", extra: "warmup: {steady: 5%, window: 200ms}", want: []string{"warmup window 200ms is shorter than 400ms"}},
		{name: "steady window negative", slo: "-", need: "-", search: "-", extra: "warmup: {steady: 5%, window: -3s}", want: []string{"warmup window -3s is shorter than 400ms"}},
		{name: "steady max at its window", slo: "-", need: "-", search: "-", extra: "warmup: {steady: 5%, window: 3s, max: 3s}", want: []string{"warmup max 3s must be longer than its window 3s"}},
		{name: "steady max past a day", slo: "-", need: "-", search: "-", extra: "warmup: {steady: 5%, max: 25h}", want: []string{"warmup max 25h0m0s is more than 24h0m0s"}},
		{name: "steady window past a day", slo: "-", need: "-", search: "-", extra: "warmup: {steady: 5%, window: 25h, max: 26h}", want: []string{"warmup max 26h0m0s is more than 24h0m0s"}},
		{name: "steady without a band", slo: "-", need: "-", search: "-", extra: "warmup: {window: 3s}", want: []string{"warmup as a rule needs steady"}},
		{name: "steady a list", slo: "-", need: "-", search: "-", extra: "warmup: [steady, 5%]", want: []string{"warmup must be a single value, not a list"}},
		{name: "steady duplicate key", slo: "-", need: "-", search: "-", extra: "warmup: {steady: 5%, steady: 50%}", want: []string{`duplicate key "steady" in warmup`}},
		{name: "steady with slo", extra: "warmup: {steady: 5%}", want: []string{"warmup: {steady} watches throughput settle, which each capacity search step fixes"}},
	}
	refusedN, exit2 := 0, 0
	for _, c := range cases {
		ok := t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			disk := filepath.Join(dir, "disk")
			text := c.study
			if text == "" {
				text = capacityStudy
			}
			text = strings.NewReplacer(
				"TIER", c.tier,
				"SLO", keep(c.slo, "slo: {p99: 20ms}"),
				"NEED", keep(c.need, "need: 1000"),
				"SEARCH", keep(c.search, "search: {from: 100, max: 100000, resolution: 10%}"),
				"EXTRA", c.extra,
			).Replace(text)
			text = strings.ReplaceAll(text, "DISK", disk)
			if err := os.WriteFile(filepath.Join(dir, "dev.yaml"), []byte(or(c.profile, goodProfile)), 0o644); err != nil {
				t.Fatal(err)
			}
			study := writeStudy(t, dir, text)
			state := filepath.Join(dir, "state")
			r := tierbenchEnv(t, dir, []string{"TIERBENCH_STATE_DIR=" + state}, "validate", study)
			if r.code == 0 {
				// Not run: an accepted bad input may be a study of days.
				t.Fatalf("validate accepted it:\n%s", r.stderr)
			}
			if r.code == exitBadInput {
				exit2++
			}
			refused(t, dir, study, nil, c.want...)
			if _, err := os.Stat(disk); !os.IsNotExist(err) {
				t.Error("bad input created the tier folder")
			}
		})
		if ok {
			refusedN++
		}
	}
	t.Logf("validate exits 2 on %d of %d bad inputs of the new keys; %d pass every check (validate and run exit 2 with one problem naming the fix, nothing created)", exit2, len(cases), refusedN)
}

// TestNewKeysBaseStudyValid checks that capacityStudy as it is, and with
// each piece the cases take out, is valid: a case's refusal is its own
// value's, not the base's.
func TestNewKeysBaseStudyValid(t *testing.T) {
	for _, c := range []newKeyCase{
		{name: "capacity"},
		{name: "capacity with prices", tier: ", cost: {per_gib_month: $0.1, per_month: $5}", extra: "host: {cost: {per_month: $300}}\nsize: {wal: 16GiB}"},
		{name: "profile", tier: ", profile: ./dev.yaml"},
		{name: "closed loop", slo: "-", need: "-", search: "-", extra: "warmup: {steady: 5%, window: 3s, max: 60s}"},
		{name: "open loop", slo: "-", need: "-", search: "-", extra: "target_rate: [1000, 2000]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			text := strings.NewReplacer(
				"TIER", c.tier,
				"SLO", keep(c.slo, "slo: {p99: 20ms}"),
				"NEED", keep(c.need, "need: 1000"),
				"SEARCH", keep(c.search, "search: {from: 100, max: 100000, resolution: 10%}"),
				"EXTRA", c.extra,
			).Replace(capacityStudy)
			text = strings.ReplaceAll(text, "DISK", filepath.Join(dir, "disk"))
			if err := os.WriteFile(filepath.Join(dir, "dev.yaml"), []byte(goodProfile), 0o644); err != nil {
				t.Fatal(err)
			}
			r := tierbenchEnv(t, dir, []string{"TIERBENCH_STATE_DIR=" + filepath.Join(dir, "state")}, "validate", writeStudy(t, dir, text))
			if r.code != 0 {
				t.Errorf("validate: exit %d, want 0\n%s", r.code, r.stderr)
			}
		})
	}
}

// keep returns v, def when v is empty, or nothing when v is "-".
func keep(v, def string) string {
	if v == "-" {
		return ""
	}
	return or(v, def)
}

// rateList is n distinct rates, comma-separated.
func rateList(n int) string {
	rates := make([]string, n)
	for i := range rates {
		rates[i] = fmt.Sprint(1000 + i)
	}
	return strings.Join(rates, ", ")
}

// profileAliasBomb is an assumed: key of nested aliases that would
// expand to 10^9 strings.
func profileAliasBomb() string {
	var b strings.Builder
	b.WriteString("x0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= 9; i++ {
		refs := strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 10), ", ")
		fmt.Fprintf(&b, "x%d: &a%d [%s]\n", i, i, refs)
	}
	return b.String()
}

// TestRefusesBadGateAndExportFlags is issue 59's table of command-line
// values of compare, export and run that could switch a gate off or name
// nothing: an empty or unknown --fail-on, --tolerance or --what, a bad
// --hdr or --metrics. Each exits 2 naming the flag and its fix, and
// writes nothing: no file, no folder, no results.
func TestRefusesBadGateAndExportFlags(t *testing.T) {
	work := t.TempDir()
	resultsDir := filepath.Join(work, "results")
	id := storeComparable(t, resultsDir)
	dir := t.TempDir()
	study := writeStudy(t, dir, strings.NewReplacer("TIER", "", "SLO", "", "NEED", "", "SEARCH", "", "EXTRA", "",
		"DISK", filepath.Join(dir, "disk")).Replace(capacityStudy))
	out := filepath.Join(work, "out")
	cmp := []string{"compare", id, "--placements", "all-disk,wal-ram", "--results", resultsDir}
	exp := []string{"export", id, "--results", resultsDir}
	run := []string{"run", study, "--results", filepath.Join(dir, "results")}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"fail-on empty", append(cmp, "--fail-on", ""), "--fail-on is empty"},
		{"fail-on blank", append(cmp, "--fail-on", " "), `unknown --fail-on " "`},
		{"fail-on unknown", append(cmp, "--fail-on", "slower"), `unknown --fail-on "slower": use worse or not-equivalent`},
		{"fail-on with a space", append(cmp, "--fail-on", "worse "), `unknown --fail-on "worse "`},
		{"fail-on upper case", append(cmp, "--fail-on", "WORSE"), `unknown --fail-on "WORSE"`},
		{"fail-on empty with tolerance", append(cmp, "--fail-on", "", "--tolerance", "5%"), "--fail-on is empty"},
		{"tolerance empty", append(cmp, "--fail-on", "worse", "--tolerance", ""), "--tolerance is empty"},
		{"tolerance empty without fail-on", append(cmp, "--tolerance", ""), "--tolerance is empty"},
		{"tolerance without a %", append(cmp, "--fail-on", "worse", "--tolerance", "5"), `--tolerance "5" is not a percentage`},
		{"tolerance NaN", append(cmp, "--fail-on", "worse", "--tolerance", "NaN%"), `--tolerance "NaN%" is not a percentage`},
		{"tolerance negative", append(cmp, "--fail-on", "worse", "--tolerance", "-5%"), "must be from 0% to below 100%"},
		{"tolerance 100%", append(cmp, "--fail-on", "worse", "--tolerance", "100%"), "must be from 0% to below 100%"},
		{"tolerance with not-equivalent", append(cmp, "--fail-on", "not-equivalent", "--tolerance", "5%"), "--tolerance goes with --fail-on worse"},
		{"tolerance without fail-on", append(cmp, "--tolerance", "5%"), "add --fail-on worse or remove --tolerance"},
		{"what empty", append(exp, "--format", "csv", "--what", ""), "--what is empty"},
		{"what empty with -o", append(exp, "--what", "", "-o", filepath.Join(out, "x.csv")), "--what is empty"},
		{"what empty with hdr", append(exp, "--what", "", "--hdr", filepath.Join(out, "hdr")), "--what is empty"},
		{"what unknown", append(exp, "--format", "csv", "--what", "rows"), `unknown --what "rows": use runs, groups, comparisons or events`},
		{"what with hdr only", append(exp, "--what", "groups", "--hdr", filepath.Join(out, "hdr")), "--what picks a CSV table"},
		{"what with json", append(exp, "--format", "json", "--what", "runs"), "--what picks a CSV table"},
		{"format empty", append(exp, "--format", ""), "--format is empty"},
		{"hdr empty", append(exp, "--hdr", ""), "--hdr needs a folder"},
		{"hdr blank", append(exp, "--hdr", "  "), "--hdr needs a folder"},
		{"hdr under a file", append(exp, "--hdr", filepath.Join(study, "hdr")), "--hdr " + filepath.Join(study, "hdr") + " cannot be made"},
		{"hdr in /proc", append(exp, "--hdr", "/proc/tierbench-hdr"), "--hdr /proc/tierbench-hdr cannot be made: folder /proc is on proc"},
		{"results in /proc", []string{"run", study, "--results", "/proc/tierbench-results"}, "folder /proc is on proc"},
		{"metrics empty", append(run, "--metrics", ""), "--metrics needs an address"},
		{"metrics without a port", append(run, "--metrics", "127.0.0.1"), `--metrics "127.0.0.1": want HOST:PORT`},
		{"metrics port out of range", append(run, "--metrics", "127.0.0.1:70000"), "the port must be a number from 0 to 65535"},
		{"metrics port negative", append(run, "--metrics", "127.0.0.1:-1"), "the port must be a number from 0 to 65535"},
		{"metrics port with a sign", append(run, "--metrics", "127.0.0.1:+80"), "the port must be a number from 0 to 65535"},
		{"metrics a URL", append(run, "--metrics", "http://127.0.0.1:9464/metrics"), "want HOST:PORT"},
		{"metrics port a name", append(run, "--metrics", "127.0.0.1:http"), "the port must be a number from 0 to 65535"},
		{"metrics every address", append(run, "--metrics", ":9464"), "listens on every address"},
		{"metrics not loopback", append(run, "--metrics", "192.0.2.1:9464"), "is not a loopback address"},
		{"metrics public without metrics", append(run, "--metrics-public"), "--metrics-public needs --metrics ADDR"},
	}
	refusedN, exit2 := 0, 0
	for _, c := range cases {
		ok := t.Run(c.name, func(t *testing.T) {
			r := tierbenchEnv(t, work, []string{"TIERBENCH_STATE_DIR=" + filepath.Join(work, "state")}, c.args...)
			if r.code == exitBadInput {
				exit2++
			}
			if r.code != exitBadInput || !strings.Contains(r.stderr, c.want) {
				t.Errorf("exit %d, want 2 and %q\nstdout:\n%s\nstderr:\n%s", r.code, c.want, r.stdout, r.stderr)
			}
			if n := strings.Count(strings.TrimSpace(r.stderr), "\n"); r.code == exitBadInput && n > 0 {
				t.Errorf("want one line of error, got %d:\n%s", n+1, r.stderr)
			}
			for _, p := range []string{out, filepath.Join(dir, "results"), filepath.Join(work, "state"), filepath.Join(dir, "disk"), filepath.Join(work, "tierbench-results")} {
				if _, err := os.Stat(p); !os.IsNotExist(err) {
					t.Errorf("bad input created %s", p)
					os.RemoveAll(p)
				}
			}
		})
		if ok {
			refusedN++
		}
	}
	t.Logf("exit 2 on %d of %d bad command-line values; %d pass every check (the message wanted, one line, nothing written)", exit2, len(cases), refusedN)
}

// storeComparable stores a study of two placements, three rounds of ok
// runs each, so that compare --placements has rows to judge; it returns
// the study's id.
func storeComparable(t *testing.T, dir string) string {
	t.Helper()
	store, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	st := &results.Study{ID: "20261207-050000-abcdef", Name: "s", Engine: "pebble", Workload: "ycsb-a", Status: results.StudyDone, StartedAt: time.Now(),
		Placements: []results.Placement{{Name: "all-disk"}, {Name: "wal-ram"}}, Durability: []string{"sync"}, Clients: []int{1}, Baseline: "all-disk"}
	if err := store.PutStudy(ctx, st); err != nil {
		t.Fatal(err)
	}
	seq := 0
	for round := 1; round <= 3; round++ {
		for i, pl := range []string{"all-disk", "wal-ram"} {
			seq++
			tput := 1000.0 + float64(10*round) + float64(100*i)
			r := &results.Run{ID: fmt.Sprintf("%s-%03d", st.ID, seq), StudyID: st.ID, Seq: seq, Placement: pl, Durability: "sync", Clients: 1, Repeat: round,
				Status: results.RunOK, Driver: "builtin", DurationS: 1, Ops: int64(tput), ThroughputOpsS: tput,
				Latency: hist.Summary{Count: int64(tput), P50: 100, P90: 200, P95: 250, P99: 300 + float64(round), P999: 400, Max: 500, Mean: 120}}
			if err := store.AddRun(ctx, r, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	return st.ID
}
