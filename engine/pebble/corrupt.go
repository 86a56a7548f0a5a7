package pebble

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tierbench/tierbench/engine"
)

var (
	_ engine.CorruptionChecker = (*DB)(nil)
	_ engine.CorruptionChecker = (*childDB)(nil)
)

// CheckCorruption runs Pebble's own consistency check of the instance
// (engine.CorruptionChecker): CheckLevels reads every key of every
// memtable and sstable, so every block's checksum is verified, and checks
// that the levels order the keys' versions as the LSM requires. The WAL's
// checksums were verified by the replay at Open: a WAL corrupt before its
// end fails Open, which the runner counts as corrupt. A fatal error the
// check raises is damage too.
func (d *DB) CheckCorruption(context.Context) (damage string, err error) {
	if err := d.broken(); err != nil {
		return "pebble: " + err.Error(), nil
	}
	defer func() {
		if p := recover(); p != nil {
			fe, ok := p.(*FatalError)
			if !ok {
				panic(p)
			}
			damage, err = "pebble: "+firstLine(fe.Error()), nil
		}
	}()
	if err := d.db.CheckLevels(nil); err != nil {
		return "pebble: " + firstLine(err.Error()), nil
	}
	return "", nil
}

// firstLine is a Pebble error's message without the stack traces its
// detailed form goes on with.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// CheckCorruption asks the child to check its instance (DB.CheckCorruption).
func (d *childDB) CheckCorruption(ctx context.Context) (string, error) {
	s, err := d.NewSession(ctx)
	if err != nil {
		return "", err
	}
	defer s.Close()
	var damage string
	if err := s.(*childSession).call("CheckCorruption", true, &damage); err != nil {
		return "", fmt.Errorf("pebble child: check: %w", err)
	}
	return damage, nil
}

// CheckCorruption is the child's end of childDB.CheckCorruption.
func (s *Service) CheckCorruption(_ bool, damage *string) (err error) {
	if s.d == nil {
		return errors.New("no instance")
	}
	*damage, err = s.d.CheckCorruption(context.Background())
	return err
}
