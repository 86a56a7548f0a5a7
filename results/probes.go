package results

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tierbench/tierbench/tier/probe"
)

const probeSchema = `
CREATE TABLE IF NOT EXISTS probes (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	taken_at    TEXT NOT NULL,
	path        TEXT NOT NULL,
	mount_point TEXT NOT NULL,
	device      TEXT NOT NULL,
	fs_type     TEXT NOT NULL,
	quick       INTEGER NOT NULL,
	doc         TEXT NOT NULL  -- the probe.Tier as JSON
);
CREATE INDEX IF NOT EXISTS probes_by_storage ON probes(device, fs_type, mount_point, taken_at);
`

// ProbeCache is where probe facts are kept and found: the results
// store's probes table, behind the two calls a study's probe makes.
// A study reaches it through this, not through its runs' records.
type ProbeCache interface {
	PutProbe(ctx context.Context, p Probe) error
	LatestProbe(ctx context.Context, device, fsType, mountPoint string, since time.Time) (*Probe, error)
}

var _ ProbeCache = (*Store)(nil)

// Probe is a stored fio characterisation of a tier's storage.
type Probe struct {
	TakenAt    time.Time  `json:"taken_at"`
	MountPoint string     `json:"mount_point"`
	Quick      bool       `json:"quick"`
	Tier       probe.Tier `json:"tier"`
}

// PutProbe stores a probe; mountPoint identifies the filesystem it measured.
func (s *Store) PutProbe(ctx context.Context, p Probe) error {
	doc, err := json.Marshal(p.Tier)
	if err != nil {
		return fmt.Errorf("encode probe of %s: %w", p.Tier.Path, err)
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO probes (taken_at, path, mount_point, device, fs_type, quick, doc) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		p.TakenAt.UTC().Format(timeFmt), p.Tier.Path, p.MountPoint, p.Tier.Device, p.Tier.FSType, p.Quick, string(doc))
	if err != nil {
		return fmt.Errorf("store probe of %s: %w", p.Tier.Path, err)
	}
	return nil
}

// LatestProbe returns the newest successful probe of the filesystem on
// device with fsType mounted at mountPoint, taken after since; nil if none.
func (s *Store) LatestProbe(ctx context.Context, device, fsType, mountPoint string, since time.Time) (*Probe, error) {
	var taken, doc string
	var quick bool
	err := s.db.QueryRowContext(ctx, `SELECT taken_at, quick, doc FROM probes
		WHERE device = ? AND fs_type = ? AND mount_point = ? AND taken_at >= ? AND doc NOT LIKE '%"error":%'
		ORDER BY taken_at DESC LIMIT 1`, device, fsType, mountPoint, since.UTC().Format(timeFmt)).Scan(&taken, &quick, &doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find probe of %s: %w", mountPoint, err)
	}
	p := &Probe{MountPoint: mountPoint, Quick: quick}
	if p.TakenAt, err = time.Parse(timeFmt, taken); err != nil {
		return nil, fmt.Errorf("decode probe time %q: %w", taken, err)
	}
	if err := json.Unmarshal([]byte(doc), &p.Tier); err != nil {
		return nil, fmt.Errorf("decode probe: %w", err)
	}
	return p, nil
}
