package pebble

import (
	"encoding/binary"
	"errors"
	"io"

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
		m := &fieldsMerge{}
		return m, m.MergeOlder(value)
	},
}

// fieldsMerge keeps the newest value of each field. Operands arrive
// newest-first via MergeOlder or oldest-first via MergeNewer. Field values
// are copied into one growing buffer and referenced by offset, so a merge
// allocates a handful of times, not once per field.
type fieldsMerge struct {
	buf   []byte
	spans []span // by field index; set == false when not seen yet
}

type span struct {
	off, len int
	set      bool
}

func (m *fieldsMerge) put(i int, v []byte, overwrite bool) {
	if i >= len(m.spans) {
		m.spans = append(m.spans, make([]span, i+1-len(m.spans))...)
	}
	if m.spans[i].set && !overwrite {
		return
	}
	m.spans[i] = span{off: len(m.buf), len: len(v), set: true}
	m.buf = append(m.buf, v...)
}

func (m *fieldsMerge) MergeNewer(value []byte) error {
	return decodeFields(value, func(i int, v []byte) { m.put(i, v, true) })
}

func (m *fieldsMerge) MergeOlder(value []byte) error {
	return decodeFields(value, func(i int, v []byte) { m.put(i, v, false) })
}

func (m *fieldsMerge) Finish(bool) ([]byte, io.Closer, error) {
	out := make([]byte, 0, len(m.buf)+4*len(m.spans))
	for i, sp := range m.spans {
		if sp.set {
			out = appendField(out, i, m.buf[sp.off:sp.off+sp.len])
		}
	}
	return out, nil, nil
}
