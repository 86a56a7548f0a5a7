package engine

import (
	"strings"
	"testing"
)

func TestRedactTarget(t *testing.T) {
	for _, c := range []struct{ target, want string }{
		{"postgres://bench:s3cret@db.example:5432/tb?sslmode=disable", "postgres://bench:xxxxx@db.example:5432/tb?sslmode=disable"},
		{"postgresql://bench@db.example/tb?password=s3cret", "postgresql://bench@db.example/tb?password=xxxxx"},
		{"mysql://tierbench:s3cret@127.0.0.1:3306/tierbench", "mysql://tierbench:xxxxx@127.0.0.1:3306/tierbench"},
		{"redis://:s3cret@127.0.0.1:6379/2", "redis://:xxxxx@127.0.0.1:6379/2"},
		{"redis://default:s3cret@cache:6379", "redis://default:xxxxx@cache:6379"},
		{"redis://127.0.0.1:6379", "redis://127.0.0.1:6379"},
		{"postgres://bench@db.example/tb", "postgres://bench@db.example/tb"},
		{"mysql://u:s3cret@[::1/db", "(unparseable target)"},
	} {
		got := RedactTarget(c.target)
		if got != c.want {
			t.Errorf("RedactTarget(%q) = %q, want %q", c.target, got, c.want)
		}
		if strings.Contains(got, "s3cret") {
			t.Errorf("RedactTarget(%q) shows the password: %q", c.target, got)
		}
	}
}

func TestEndpointURL(t *testing.T) {
	for _, c := range []struct {
		e    Endpoint
		want string
	}{
		{Endpoint{Scheme: "postgres", Host: "127.0.0.1", Port: 5432, User: "postgres", Database: "postgres"}, "postgres://postgres@127.0.0.1:5432/postgres"},
		{Endpoint{Scheme: "mysql", Host: "127.0.0.1", Port: 3306, User: "tierbench", Password: "p@ss/w:rd", Database: "tierbench"}, "mysql://tierbench:p%40ss%2Fw%3Ard@127.0.0.1:3306/tierbench"},
		{Endpoint{Scheme: "redis", Host: "::1", Port: 6379, Password: "pw"}, "redis://:pw@[::1]:6379"},
		{Endpoint{Scheme: "postgres", Host: "/var/run/postgresql", Port: 5432, User: "bench", Database: "tb"}, "postgres://bench@:5432/tb?host=%2Fvar%2Frun%2Fpostgresql"},
	} {
		if got := c.e.URL(); got != c.want {
			t.Errorf("%+v.URL() = %q, want %q", c.e, got, c.want)
		}
	}
}

func TestRedactTargetIn(t *testing.T) {
	src := "engine: mariadb\ntarget: mysql://u:s3cretpw@127.0.0.1:3306/db\n# password s3cretpw\n"
	got := RedactTargetIn(src, "mysql://u:s3cretpw@127.0.0.1:3306/db")
	if strings.Contains(got, "s3cretpw") || !strings.Contains(got, "mysql://u:xxxxx@127.0.0.1:3306/db") {
		t.Errorf("RedactTargetIn = %q", got)
	}
}
