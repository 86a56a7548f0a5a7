// Package profile holds named device descriptions (profiles) that an
// emulated tier can take in place of hand-written latency: latency per
// operation (p50 and p99 at queue depth 1, 4 KiB), IOPS and bandwidth
// limits, and what survives a power cut. Profiles are data: the shipped
// ones are YAML files embedded from profiles/, each with the source its
// figures come from and the figures that are assumed; a user's profile is
// a file of the same form (Load), such as `tierbench probe --save-profile`
// writes.
//
// The package only reads, checks and describes profiles; what an emulated
// tier can apply of one is the tier's business (see package tier), and how
// close a tier came to one is Fidelity's, from a probe (package probe).
package profile

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/tierbench/tierbench/host/userfile"
)

//go:embed profiles/*.yaml
var shipped embed.FS

// Durability is what survives a power cut on the device.
type Durability string

// The durability semantics a profile can give.
const (
	// Synced: data survives once an fsync (fdatasync, O_SYNC) covered it,
	// as on an SSD or HDD that honours cache flushes.
	Synced Durability = "synced"
	// Written: data survives once write(2) returned, as on persistent
	// memory with DAX (metadata still needs an fsync).
	Written Durability = "written"
	// None: nothing survives, as on RAM.
	None Durability = "none"
)

// Durabilities lists the durability values, for messages.
var Durabilities = []Durability{Synced, Written, None}

// Bounds of a profile's figures, so that a wrong one is refused rather
// than applied: a probe starts a writer per fsync_at_once sync, and caps
// become integers of the block I/O controller.
const (
	// MaxSyncsAtOnce bounds fsync_at_once's writer counts: the most
	// clients an engine takes.
	MaxSyncsAtOnce = 1024
	// MaxRate bounds iops and bandwidth_mib_s: a billion is past any
	// device, and fits the controller's integers.
	MaxRate = 1e9
)

// Duration is a latency, written as Go durations (10us, 2ms) in YAML.
type Duration time.Duration

// UnmarshalYAML reads a duration such as 10us.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || v < 0 || v > time.Minute {
		return fmt.Errorf("line %d: latency %q is not a duration between 0 and 1m; write e.g. 80us or 2ms", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the duration as Go writes it (80µs as 80µs).
func (d Duration) MarshalYAML() (any, error) {
	return strings.ReplaceAll(time.Duration(d).String(), "µ", "u"), nil
}

// Op is one operation's latency at queue depth 1: its median and 99th
// percentile. A P99 of zero means the same as P50 (a constant).
type Op struct {
	P50 Duration `yaml:"p50" json:"p50_ns"`
	P99 Duration `yaml:"p99,omitempty" json:"p99_ns,omitempty"`
}

// AtOnce is an fsync's latency while Syncs writers sync at once.
type AtOnce struct {
	Syncs int `yaml:"syncs" json:"syncs"`
	Op    `yaml:",inline"`
}

// Rates are a read and a write figure (IOPS, or MiB/s); zero is no limit.
type Rates struct {
	Read  float64 `yaml:"read,omitempty" json:"read,omitempty"`
	Write float64 `yaml:"write,omitempty" json:"write,omitempty"`
}

// Profile is one device description.
type Profile struct {
	// Name is how a study names a shipped profile (profile: NAME); a
	// profile file's name defaults to its file name.
	Name string `yaml:"name" json:"name"`
	// Device says in words what the profile stands for.
	Device string `yaml:"device" json:"device"`
	// Latency of 4 KiB reads and writes and of an fdatasync after a 4 KiB
	// write, at queue depth 1.
	Latency struct {
		Read  Op `yaml:"read,omitempty" json:"read"`
		Write Op `yaml:"write,omitempty" json:"write"`
		Fsync Op `yaml:"fsync,omitempty" json:"fsync"`
	} `yaml:"latency" json:"latency"`
	// FsyncAtOnce is the fsync latency (a 4 KiB write, then fdatasync, as
	// latency.fsync) while that many writers, each on a file of its own,
	// write and sync at once: how the device's flushes queue behind each
	// other. latency.fsync is the one-writer point; these are points
	// above it, in rising order. Empty: a sync takes latency.fsync
	// however many run at once.
	FsyncAtOnce []AtOnce `yaml:"fsync_at_once,omitempty" json:"fsync_at_once,omitempty"`
	// IOPS of 4 KiB random reads and writes with a deep queue.
	IOPS Rates `yaml:"iops,omitempty" json:"iops"`
	// Bandwidth of sequential reads and writes, in MiB/s.
	Bandwidth Rates `yaml:"bandwidth_mib_s,omitempty" json:"bandwidth_mib_s"`
	// Durability is what survives a power cut.
	Durability Durability `yaml:"durability" json:"durability"`
	// AtomicWrite is the largest write the device persists whole through
	// a power cut (atomic_write: 4KiB); 0 when the profile does not say,
	// and the tier's kind's default holds.
	AtomicWrite AtomicWrite `yaml:"atomic_write,omitempty" json:"atomic_write,omitempty"`
	// Source is where the figures come from: a spec sheet or a published
	// measurement, quoted with its title and URL, or the probe that
	// measured them.
	Source string `yaml:"source" json:"source"`
	// Assumed names the figures the source does not give, and why they
	// are what they are.
	Assumed string `yaml:"assumed,omitempty" json:"assumed,omitempty"`
	// File is the file the profile was read from; empty for a shipped one.
	File string `yaml:"-" json:"file,omitempty"`
}

// Names lists the shipped profiles' names, sorted.
func Names() []string {
	all, _ := Shipped()
	names := make([]string, len(all))
	for i, p := range all {
		names[i] = p.Name
	}
	return names
}

// Shipped returns every shipped profile, sorted by name. The files are
// checked by the package's tests, so an error here is a build mistake.
func Shipped() ([]Profile, error) {
	ents, err := shipped.ReadDir("profiles")
	if err != nil {
		return nil, fmt.Errorf("shipped profiles: %w", err)
	}
	var out []Profile
	for _, e := range ents {
		data, err := shipped.ReadFile("profiles/" + e.Name())
		if err != nil {
			return nil, fmt.Errorf("shipped profile %s: %w", e.Name(), err)
		}
		p, err := Parse(data, strings.TrimSuffix(e.Name(), ".yaml"))
		if err != nil {
			return nil, fmt.Errorf("shipped profile %s: %w", e.Name(), err)
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// IsFile reports whether ref names a profile file rather than a shipped
// profile: it has a slash or ends in .yaml or .yml.
func IsFile(ref string) bool {
	return strings.Contains(ref, "/") || strings.HasSuffix(ref, ".yaml") || strings.HasSuffix(ref, ".yml")
}

// ErrUnknown is returned (wrapped) for a name no shipped profile has.
var ErrUnknown = errors.New("unknown profile")

// Find returns the shipped profile called name, or an error that names
// the closest one and lists them all.
func Find(name string) (Profile, error) {
	all, err := Shipped()
	if err != nil {
		return Profile{}, err
	}
	for _, p := range all {
		if p.Name == name {
			return p, nil
		}
	}
	names := Names()
	if s := closest(name, names); s != "" {
		return Profile{}, fmt.Errorf("%w %q; did you mean %q? (profiles: %s; or give a profile file's path)", ErrUnknown, name, s, strings.Join(names, ", "))
	}
	return Profile{}, fmt.Errorf("%w %q; use one of %s, or a profile file's path (see tierbench profiles)", ErrUnknown, name, strings.Join(names, ", "))
}

// MaxFileBytes bounds a profile file: a saved one is under 2 KiB, and a
// bound refuses a wrong path (a device, a log) at once.
const MaxFileBytes = 256 << 10

// Load returns the profile ref names: a shipped profile's name, or a
// profile file's path (IsFile), relative paths taken from dir.
func Load(ref, dir string) (Profile, error) {
	if !IsFile(ref) {
		return Find(ref)
	}
	path := ref
	if !filepath.IsAbs(path) && dir != "" {
		path = filepath.Join(dir, path)
	}
	data, err := userfile.Read(path, "profile file", MaxFileBytes)
	var notFile *userfile.NotUsableError
	switch {
	case errors.As(err, &notFile):
		return Profile{}, fmt.Errorf("profile file %w", err)
	case err != nil:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is said once, as given
		}
		return Profile{}, fmt.Errorf("read profile file %s: %w; give the path of a profile file such as tierbench probe --save-profile writes", ref, err)
	}
	base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".yaml"), ".yml")
	p, err := Parse(data, base)
	if err != nil {
		return Profile{}, fmt.Errorf("profile file %s: %w", path, err)
	}
	p.File = path
	return p, nil
}

// Parse reads and checks one profile; name is used when it gives none.
func Parse(data []byte, name string) (Profile, error) {
	var p Profile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		var te *yaml.TypeError
		if errors.As(err, &te) {
			// One line: a problem is one line of validate's output.
			msg = strings.Join(te.Errors, "; ")
		}
		return Profile{}, fmt.Errorf("not a profile: %s; see the profile files that tierbench profiles lists, or docs/tiers.md", msg)
	}
	if err := oneDocument(dec); err != nil {
		return Profile{}, err
	}
	if p.Name == "" {
		p.Name = name
	}
	if err := p.check(); err != nil {
		return Profile{}, err
	}
	return p, nil
}

// check refuses a profile that asks for nothing, or whose figures cannot be.
func (p *Profile) check() error {
	if err := p.checkText(); err != nil {
		return err
	}
	if p.Latency.Read.P50 == 0 && p.Latency.Write.P50 == 0 && p.Latency.Fsync.P50 == 0 {
		return errors.New("latency sets nothing; write latency: {fsync: {p50: 2ms, p99: 5ms}}")
	}
	for _, o := range p.ops() {
		if o.op.P99 != 0 && o.op.P99 < o.op.P50 {
			return fmt.Errorf("latency %s p99 %s is below its p50 %s; a p99 is at least the p50", o.name, time.Duration(o.op.P99), time.Duration(o.op.P50))
		}
		if o.op.P99 != 0 && o.op.P50 == 0 {
			return fmt.Errorf("latency %s has a p99 but no p50; give p50 too", o.name)
		}
	}
	if err := p.checkAtOnce(); err != nil {
		return err
	}
	for _, r := range []struct {
		name string
		v    float64
	}{
		{"iops read", p.IOPS.Read}, {"iops write", p.IOPS.Write},
		{"bandwidth_mib_s read", p.Bandwidth.Read}, {"bandwidth_mib_s write", p.Bandwidth.Write},
	} {
		if !(r.v >= 0 && r.v <= MaxRate) {
			return fmt.Errorf("%s %g is not a number from 0 to %g; write the device's figure, or leave it out (or 0) for no limit", r.name, r.v, float64(MaxRate))
		}
	}
	if !slices.Contains(Durabilities, p.Durability) {
		return fmt.Errorf("durability %q is not one of synced, written or none; write durability: synced", p.Durability)
	}
	if strings.TrimSpace(p.Source) == "" {
		return errors.New("source is empty; say where the figures come from (a spec sheet's title and URL, or the measurement)")
	}
	return nil
}

// checkAtOnce refuses fsync_at_once points that do not rise from one
// writer, or that have no fsync latency to grow from.
func (p *Profile) checkAtOnce() error {
	if len(p.FsyncAtOnce) > 0 && p.Latency.Fsync.P50 == 0 {
		return errors.New("fsync_at_once without latency.fsync; give the one-writer fsync latency too")
	}
	last := 1
	for _, a := range p.FsyncAtOnce {
		switch {
		case a.Syncs <= last:
			return fmt.Errorf("fsync_at_once: syncs %d must be above %d; list the points in rising order of writers, from 2", a.Syncs, last)
		case a.Syncs > MaxSyncsAtOnce:
			return fmt.Errorf("fsync_at_once: syncs %d is more than %d, more writers than a study runs at once (a probe measures each point with that many); list points up to %d", a.Syncs, MaxSyncsAtOnce, MaxSyncsAtOnce)
		case a.P50 == 0:
			return fmt.Errorf("fsync_at_once: %d syncs has no p50; write {syncs: %d, p50: 300us, p99: 700us}", a.Syncs, a.Syncs)
		case a.P99 != 0 && a.P99 < a.P50:
			return fmt.Errorf("fsync_at_once: %d syncs: p99 %s is below its p50 %s; a p99 is at least the p50", a.Syncs, time.Duration(a.P99), time.Duration(a.P50))
		}
		last = a.Syncs
	}
	return nil
}

type namedOp struct {
	name string
	op   Op
}

func (p *Profile) ops() []namedOp {
	return []namedOp{{"read", p.Latency.Read}, {"write", p.Latency.Write}, {"fsync", p.Latency.Fsync}}
}

// SyncsAtOnce are the writer counts of the profile's fsync_at_once points,
// which a probe of its emulation measures to compare.
func (p Profile) SyncsAtOnce() []int {
	var n []int
	for _, a := range p.FsyncAtOnce {
		n = append(n, a.Syncs)
	}
	return n
}

// Tail is an operation's p99, or its p50 when no p99 is given.
func (o Op) Tail() time.Duration {
	if o.P99 == 0 {
		return time.Duration(o.P50)
	}
	return time.Duration(o.P99)
}

// Marshal writes p as a profile file.
func (p Profile) Marshal() ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(p); err != nil {
		return nil, fmt.Errorf("write profile %s: %w", p.Name, err)
	}
	return b.Bytes(), nil
}

// closest returns the name within edit distance 2 of name, or "".
func closest(name string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if d := distance(strings.ToLower(name), strings.ToLower(n)); d < bestD && d < len(name) {
			best, bestD = n, d
		}
	}
	if best == "" {
		// A prefix or a part of a name (optane, hdd) names it too.
		for _, n := range names {
			if len(name) >= 3 && strings.Contains(strings.ToLower(n), strings.ToLower(name)) {
				return n
			}
		}
	}
	return best
}

// distance is the Levenshtein distance of a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// Row is one figure of a profile against what a probe of a tier that
// emulates it achieved: latencies in µs, rates in IOPS or MiB/s. Error is
// (achieved - asked) / asked.
type Row struct {
	Figure   string  `json:"figure"`
	Asked    float64 `json:"asked"`
	Achieved float64 `json:"achieved"`
	Error    float64 `json:"error"`
}
