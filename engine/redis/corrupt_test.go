package redis

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/engine"
)

// TestCheckCorruption checks Redis's own AOF check: a server's AOF after a
// few writes passes; with a command that does not parse appended to its
// last part, redis-check-aof's complaint is the damage.
func TestCheckCorruption(t *testing.T) {
	d := openTest(t, engine.Sync, nil)
	ctx := context.Background()
	s, err := d.NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.(engine.Records).Insert(ctx, []byte("user1"), [][]byte{[]byte("v")}); err != nil {
		t.Fatal(err)
	}
	if damage, err := d.CheckCorruption(ctx); damage != "" || err != nil {
		t.Fatalf("a sound AOF: damage %q, err %v", damage, err)
	}
	parts, _ := filepath.Glob(filepath.Join(d.data, "appendonlydir", "*.incr.aof"))
	if len(parts) == 0 {
		t.Fatal("no incremental AOF part")
	}
	f, err := os.OpenFile(parts[len(parts)-1], os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("*3\r\n$3\r\nSET\r\n$1\r\nk\r\nnot a bulk string\r\n")
	f.Close()
	damage, err := d.CheckCorruption(ctx)
	t.Logf("damage %q", damage)
	if err != nil || !strings.HasPrefix(damage, "redis-check-aof: ") {
		t.Errorf("a damaged AOF: damage %q, err %v", damage, err)
	}
}
