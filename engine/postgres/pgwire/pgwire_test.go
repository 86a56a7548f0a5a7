package pgwire

import (
	"slices"
	"testing"
)

func TestTagRows(t *testing.T) {
	for tag, want := range map[string]int64{
		"UPDATE 1\x00":   1,
		"INSERT 0 1\x00": 1,
		"SELECT 100":     100,
		"DELETE 0\x00":   0,
		"BEGIN\x00":      0,
		"":               0,
	} {
		if got := tagRows([]byte(tag)); got != want {
			t.Errorf("tagRows(%q) = %d, want %d", tag, got, want)
		}
	}
}

// dataRow builds a DataRow body: a column count, then each column's length
// (-1 for NULL) and bytes.
func dataRow(cols ...[]byte) []byte {
	b := []byte{0, byte(len(cols))}
	for _, c := range cols {
		if c == nil {
			b = append(b, 0xff, 0xff, 0xff, 0xff)
			continue
		}
		n := len(c)
		b = append(b, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
		b = append(b, c...)
	}
	return b
}

func TestCopyRow(t *testing.T) {
	var c Conn
	body := dataRow([]byte("42"), nil, []byte(""))
	if err := c.copyRow(body); err != nil {
		t.Fatal(err)
	}
	clear(body) // the copy must not alias the read buffer
	want := [][]byte{[]byte("42"), nil, {}}
	if !slices.EqualFunc(c.row, want, func(a, b []byte) bool { return string(a) == string(b) && (a == nil) == (b == nil) }) {
		t.Errorf("row %q, want %q", c.row, want)
	}
	for _, bad := range [][]byte{{0}, {0, 1, 0, 0}, {0, 1, 0, 0, 0, 9, 'x'}} {
		if err := c.copyRow(bad); err == nil {
			t.Errorf("copyRow(%v): no error for a short row", bad)
		}
	}
}
