package mariadb

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/engine"
)

// TestCheckCorruption checks MariaDB's own check on a sound server: CHECK
// TABLE runs over every InnoDB table and finds nothing; and that the
// doublewrite buffer follows the innodb_doublewrite option.
func TestCheckCorruption(t *testing.T) {
	needServer(t)
	root := base(t)
	scratch := root + "/scratch"
	r := open(t, root, scratch, engine.Sync, map[string]string{"innodb_doublewrite": "false"})
	ctx := context.Background()
	for _, q := range []string{"CREATE TABLE t (id INT PRIMARY KEY, pad VARCHAR(200), KEY (pad))", "INSERT INTO t VALUES (1, 'a'), (2, 'b')"} {
		if _, err := r.db.db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	damage, err := r.db.CheckCorruption(ctx)
	if err != nil || damage != "" {
		t.Errorf("a sound server: damage %q, err %v", damage, err)
	}
	var name, value string
	if err := r.db.db.QueryRowContext(ctx, "SHOW VARIABLES LIKE 'innodb_doublewrite'").Scan(&name, &value); err != nil || !strings.EqualFold(value, "OFF") {
		t.Errorf("innodb_doublewrite = %q (%v), want OFF", value, err)
	}
}

// TestCheckCorruptionFindsDamage flips bytes in a table's data page of a
// stopped server and restarts it: either the start fails or CHECK TABLE
// reports the damage.
func TestCheckCorruptionFindsDamage(t *testing.T) {
	needServer(t)
	root := base(t)
	r := open(t, root, filepath.Join(root, "scratch"), engine.Sync, nil)
	ctx := context.Background()
	for _, q := range []string{"CREATE TABLE t (id INT PRIMARY KEY, pad VARCHAR(200))",
		"INSERT INTO t SELECT seq, REPEAT('a', 200) FROM seq_1_to_2000"} {
		if _, err := r.db.db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var schema string
	if err := r.db.db.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&schema); err != nil {
		t.Fatal(err)
	}
	if err := r.db.Close(); err != nil {
		t.Fatal(err)
	}
	ibd := filepath.Join(r.data, schema, "t.ibd")
	f, err := os.OpenFile(ibd, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt(bytes.Repeat([]byte{0x55}, 4096), 4*16384+4096)
	f.Close()
	db, err := Engine{}.Open(ctx, engine.Config{Dirs: map[string]string{Data: r.data, Redo: r.redo}, Durability: engine.Sync,
		Options: Engine{}.Spec().MustResolveOptions(nil), Scratch: filepath.Join(root, "scratch")})
	if err != nil {
		t.Logf("the start found it: %v", err)
		return
	}
	defer db.Close()
	damage, err := db.(*DB).CheckCorruption(ctx)
	t.Logf("damage %q", damage)
	if err != nil || damage == "" {
		t.Errorf("a torn page of %s: damage %q, err %v", ibd, damage, err)
	}
}
