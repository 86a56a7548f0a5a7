package pebble

import (
	"encoding/binary"
	"errors"
	"io"
	"sort"

	"github.com/cockroachdb/pebble/v2"
)

// A record value is a list of fields, each encoded as
// uvarint(index) uvarint(len) bytes. A full record lists every field; a merge
// operand lists only the fields an update changes. Merging keeps the newest
// value of each field.

func appendField(dst []byte, index int, v []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(index))
	dst = binary.AppendUvarint(dst, uint64(len(v)))
	return append(dst, v...)
}

func encodeRecord(dst []byte, fields [][]byte) []byte {
	for i, f := range fields {
		dst = appendField(dst, i, f)
	}
	return dst
}

var errCorrupt = errors.New("corrupt record encoding")

// decodeFields calls fn for each field of an encoded record in order.
func decodeFields(b []byte, fn func(index int, v []byte)) error {
	for len(b) > 0 {
		idx, n := binary.Uvarint(b)
		if n <= 0 {
			return errCorrupt
		}
		b = b[n:]
		l, n := binary.Uvarint(b)
		if n <= 0 || uint64(len(b)-n) < l {
			return errCorrupt
		}
		fn(int(idx), b[n:n+int(l)])
		b = b[n+int(l):]
	}
	return nil
}

// fieldMerger is registered with Pebble under a stable name: Pebble stores the
// name and refuses to reopen a DB with a different merger.
var fieldMerger = &pebble.Merger{
	Name: "tierbench.fields.v1",
	Merge: func(_, value []byte) (pebble.ValueMerger, error) {
		m := &fieldsMerge{fields: map[int][]byte{}}
		return m, m.MergeOlder(value)
	},
}

// fieldsMerge collects field values; operands arrive newest-first via
// MergeOlder or oldest-first via MergeNewer.
type fieldsMerge struct {
	fields map[int][]byte
}

func (m *fieldsMerge) MergeNewer(value []byte) error {
	return decodeFields(value, func(i int, v []byte) {
		m.fields[i] = append([]byte(nil), v...)
	})
}

func (m *fieldsMerge) MergeOlder(value []byte) error {
	return decodeFields(value, func(i int, v []byte) {
		if _, ok := m.fields[i]; !ok {
			m.fields[i] = append([]byte(nil), v...)
		}
	})
}

func (m *fieldsMerge) Finish(bool) ([]byte, io.Closer, error) {
	idx := make([]int, 0, len(m.fields))
	for i := range m.fields {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	var out []byte
	for _, i := range idx {
		out = appendField(out, i, m.fields[i])
	}
	return out, nil, nil
}
