package server

import (
	"strings"
	"testing"
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
