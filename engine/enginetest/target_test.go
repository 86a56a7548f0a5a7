package enginetest

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/host/tcpport"
)

// TestMain removes the servers' shared test folder after the tests.
func TestMain(m *testing.M) { Main(m, "enginetest") }

// TestTargetErrors checks the errors of targets that are wrong for the
// engine or unreachable, and that none shows the password. No server runs.
func TestTargetErrors(t *testing.T) {
	port, err := tcpport.Free() // nothing listens there
	if err != nil {
		t.Fatal(err)
	}
	closed := "127.0.0.1:" + strconv.Itoa(port)
	for _, c := range []struct {
		e      SQLEngine
		target string
		want   string
	}{
		{sqlEngines[0], "mysql://u:s3cret@db:3306/x", "engine postgres needs a postgres:// target, got mysql://u:xxxxx@db:3306/x"},
		{sqlEngines[1], "postgres://u:s3cret@db/x", "engine mariadb needs a mysql:// target, got postgres://u:xxxxx@db/x"},
		{redisEngine, "mysql://u:s3cret@db/x", "engine redis needs a redis:// target, got mysql://u:xxxxx@db/x"},
		// Engine.Open's own errors: the runner adds "open ENGINE: ".
		{sqlEngines[1], "mysql://u:s3cret@db:3306", "target mysql://u:xxxxx@db:3306: name one database"},
		{sqlEngines[0], "postgres://u:s3cret@" + closed + "/x", "connect to target postgres://u:xxxxx@" + closed + "/x"},
		{sqlEngines[1], "mysql://u:s3cret@" + closed + "/x", "connect to target mysql://u:xxxxx@" + closed + "/x"},
		{redisEngine, "redis://:s3cret@" + closed + "/1", "connect to target redis://:xxxxx@" + closed + "/1"},
	} {
		db, err := c.e.Engine.Open(context.Background(), engine.Config{Target: c.target, Options: c.e.Engine.Spec().MustResolveOptions(nil)})
		if err == nil {
			db.Close()
			t.Errorf("%s opened target %s", c.e.Name, c.target)
			continue
		}
		t.Logf("%s: %v", c.e.Name, err)
		if !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s on %s: %v\nwant it to start with %s", c.e.Name, engine.RedactTarget(c.target), err, c.want)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: the error shows the password: %v", c.e.Name, err)
		}
	}
}
