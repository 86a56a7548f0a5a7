package mywire

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/tierbench/tierbench/engine/sqlwire"
)

func TestLenenc(t *testing.T) {
	for _, v := range []uint64{0, 1, 250, 251, 0xffff, 0x10000, 0xffffff, 0x1000000, math.MaxUint64} {
		b := appendLenenc(nil, v)
		got, size := lenenc(append(b, 'x'))
		if got != v || size != len(b) {
			t.Errorf("lenenc(appendLenenc(%d)) = %d, %d bytes; want %d bytes", v, got, size, len(b))
		}
		if _, size := lenenc(b[:len(b)-1]); len(b) > 1 && size != 0 {
			t.Errorf("lenenc of %d cut short read %d bytes", v, size)
		}
	}
}

// columnDef builds a column definition packet of type typ.
func columnDef(typ byte, flags uint16) []byte {
	b := []byte{}
	for _, s := range []string{"def", "db", "t", "t", "c", "c"} {
		b = append(appendLenenc(b, uint64(len(s))), s...)
	}
	b = append(b, 0x0c, 33, 0, 11, 0, 0, 0, typ)
	b = binary.LittleEndian.AppendUint16(b, flags)
	return append(b, 0, 0, 0)
}

func TestCopyRow(t *testing.T) {
	cols := []column{}
	for _, d := range []struct {
		typ   byte
		flags uint16
	}{{typeLong, 0}, {typeLongLong, flagUnsigned}, {typeString, 0}, {typeTiny, 0}, {typeDouble, 0}, {typeShort, 0}} {
		c, err := parseColumn(columnDef(d.typ, d.flags))
		if err != nil {
			t.Fatal(err)
		}
		cols = append(cols, c)
	}
	// A binary row: header, NULL bitmap (offset 2; column 5 is NULL),
	// then the values of the others.
	row := []byte{0, 1 << (5 + 2)}
	row = binary.LittleEndian.AppendUint32(row, uint32(0xffffff85)) // -123
	row = binary.LittleEndian.AppendUint64(row, math.MaxUint64)
	row = append(appendLenenc(row, 5), "hello"...)
	row = append(row, 0xfe) // tiny -2
	row = binary.LittleEndian.AppendUint64(row, math.Float64bits(1.5))
	var c Conn
	if err := c.copyRow(row, cols); err != nil {
		t.Fatal(err)
	}
	clear(row) // the copy must not alias the read buffer
	want := [][]byte{[]byte("-123"), []byte("18446744073709551615"), []byte("hello"), []byte("-2"), []byte("1.5"), nil}
	if !slices.EqualFunc(c.row, want, func(a, b []byte) bool { return string(a) == string(b) && (a == nil) == (b == nil) }) {
		t.Errorf("row %q, want %q", c.row, want)
	}
	for _, bad := range [][]byte{{0}, {1, 0}, {0, 0, 0, 1, 2}} {
		if err := c.copyRow(bad, cols[:1]); err == nil {
			t.Errorf("copyRow(%v): no error for a malformed row", bad)
		}
	}
}

func TestExecute(t *testing.T) {
	c := Conn{}
	st := &stmt{id: 7, params: 3}
	if err := c.execute(st, []sqlwire.Arg{sqlwire.Int(-1), sqlwire.Null(), sqlwire.Bytes([]byte("ab"))}); err != nil {
		t.Fatal(err)
	}
	want := []byte{0, 0, 0, 0, comStmtExecute, 7, 0, 0, 0, 0, 1, 0, 0, 0,
		0b010, 1, typeLongLong, 0, typeNull, 0, typeString, 0,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 'a', 'b'}
	if !slices.Equal(c.w, want) {
		t.Errorf("execute packet\n%v, want\n%v", c.w, want)
	}
	if err := c.execute(st, nil); err == nil {
		t.Error("no error for too few arguments")
	}
}

func TestServerError(t *testing.T) {
	p := append([]byte{hdrErr, 0x26, 0x04}, "#23000Duplicate entry"...)
	var me *mysql.MySQLError
	if err := serverError(p); !errors.As(err, &me) || me.Number != 1062 || string(me.SQLState[:]) != "23000" || me.Message != "Duplicate entry" {
		t.Errorf("serverError = %#v", err)
	}
}

func TestParseOK(t *testing.T) {
	rows, status, err := parseOK([]byte{hdrOK, 3, 0, byte(statusInTrans), 0, 0, 0})
	if err != nil || rows != 3 || status != statusInTrans {
		t.Errorf("parseOK = %d, %#x, %v", rows, status, err)
	}
	if _, _, err := parseOK([]byte{hdrOK, 3}); err == nil {
		t.Error("no error for a short OK packet")
	}
}
