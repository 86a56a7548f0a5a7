package server

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/engine"
)

func TestTarget(t *testing.T) {
	for _, c := range []struct {
		engine, target string
		schemes        []string
		err            string // empty: accepted
	}{
		{"postgres", "postgres://u:pw@h:5432/db", []string{"postgres", "postgresql"}, ""},
		{"postgres", "POSTGRESQL://u@h/db", []string{"postgres", "postgresql"}, ""},
		{"postgres", "mysql://u:s3cret@h:3306/db", []string{"postgres", "postgresql"}, "engine postgres needs a postgres:// target, got mysql://u:xxxxx@h:3306/db"},
		{"mariadb", "redis://:s3cret@h:6379", []string{"mysql", "mariadb"}, "engine mariadb needs a mysql:// target, got redis://:xxxxx@h:6379"},
		{"redis", "localhost:6379", []string{"redis", "rediss"}, "engine redis needs a redis:// target, got localhost:6379"},
		{"redis", "127.0.0.1:6379", []string{"redis", "rediss"}, "engine redis: target (unparseable target) is not a URL"},
		{"redis", "redis:h:6379", []string{"redis", "rediss"}, "engine redis: target redis:h:6379: want redis://host... (with the two slashes)"},
		{"mariadb", "mysql://u:s3cret@[::1/db", []string{"mysql"}, "engine mariadb: target (unparseable target) is not a URL"},
		{"pebble", "postgres://u:s3cret@h/db", nil, "engine pebble cannot connect to a server it did not start"},
	} {
		_, err := Target(c.engine, c.target, c.schemes...)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("Target(%s, %q) = %v", c.engine, c.target, err)
		case c.err != "" && (err == nil || !strings.HasPrefix(err.Error(), c.err)):
			t.Errorf("Target(%s, %q) = %v, want %q", c.engine, c.target, err, c.err)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("error shows the password: %v", err)
		}
	}
}

// TestOpenTarget checks OpenTarget's steps and errors: a wrong scheme is
// Target's error; a URL the driver refuses and a server that does not
// answer are named with the target, never its password.
func TestOpenTarget(t *testing.T) {
	spec := engine.Spec{Name: "kv", TargetSchemes: []string{"kv"}}
	refused, down := errors.New("no database named"), errors.New("connection refused")
	parse := func(u *url.URL) (string, error) {
		if u.Path == "" {
			return "", refused
		}
		return u.Host, nil
	}
	connect := func(_ context.Context, host string) (engine.DB, error) {
		if host == "down:1" {
			return nil, down
		}
		return nil, nil
	}
	for _, c := range []struct {
		target, err string
		is          error
	}{
		{"kv://u:s3cret@up:1/db", "", nil},
		{"sql://u:s3cret@up:1/db", "engine kv needs a kv:// target, got sql://u:xxxxx@up:1/db", nil},
		{"kv://u:s3cret@up:1", "target kv://u:xxxxx@up:1: no database named", refused},
		{"kv://u:s3cret@down:1/db", "connect to target kv://u:xxxxx@down:1/db: connection refused", down},
	} {
		_, err := OpenTarget(context.Background(), spec, c.target, parse, connect)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.target, err)
		case c.err != "" && (err == nil || err.Error() != c.err):
			t.Errorf("%s: %v, want %s", engine.RedactTarget(c.target), err, c.err)
		case c.is != nil && !errors.Is(err, c.is):
			t.Errorf("%s: %v does not wrap %v", engine.RedactTarget(c.target), err, c.is)
		}
	}
}
