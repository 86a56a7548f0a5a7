package objects

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Names of buckets and objects: bucket c is tierbench-c, and object i of
// every bucket obj-i, zero-padded so a listing comes back in number order.
const (
	bucketPrefix = "tierbench-"
	objectPrefix = "obj-"
)

func bucketName(c int) string { return bucketPrefix + strconv.Itoa(c) }

func objectName(i int) string { return fmt.Sprintf("%s%08d", objectPrefix, i) }

// objectNumber returns the number of object name, or false for a name
// objectName never makes.
func objectNumber(name string) (int, bool) {
	digits, ok := strings.CutPrefix(name, objectPrefix)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(digits)
	if err != nil || i < 0 || objectName(i) != name {
		return 0, false
	}
	return i, true
}

// Contents. Variant v of an object of size bytes is v in its first
// headerBytes (little endian), then pattern[v : v+size-headerBytes], where
// pattern is seeded random bytes shared by every client. A reader learns v
// from the header and checks the rest; a writer sends a slice of the
// pattern behind its own header, so no body is copied or allocated.
const (
	headerBytes = 8
	variants    = 4096
)

// streamContent keeps the pattern's random numbers apart from the clients'.
const streamContent = 0xC0B5E7C4

// newPattern returns the seeded bytes every variant of an object of size
// bytes is cut from.
func newPattern(seed uint64, size int) []byte {
	p := make([]byte, size-headerBytes+variants+7)
	rng := rand.New(rand.NewPCG(seed, streamContent))
	for i := 0; i+8 <= len(p); i += 8 {
		binary.LittleEndian.PutUint64(p[i:], rng.Uint64())
	}
	return p[:size-headerBytes+variants]
}

// loadVariant is the variant the load writes as object i of bucket c: a
// function of both, so the load's objects differ from each other.
func (w *Workload) loadVariant(c, i int) int { return (c*w.objects + i) % variants }

// body is an object's body as a PUT sends it: a header and a slice of the
// pattern. Set makes it another variant; one client reuses one.
type body struct {
	head [headerBytes]byte
	rest []byte
	off  int
}

// set makes b variant v of an object of size bytes cut from pattern.
func (b *body) set(pattern []byte, size, v int) {
	binary.LittleEndian.PutUint64(b.head[:], uint64(v))
	b.rest = pattern[v : v+size-headerBytes]
	b.off = 0
}

// Read reads the header, then the pattern's slice.
func (b *body) Read(p []byte) (int, error) {
	n := 0
	if b.off < headerBytes {
		n = copy(p, b.head[b.off:])
	}
	if b.off+n >= headerBytes {
		n += copy(p[n:], b.rest[b.off+n-headerBytes:])
	}
	b.off += n
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// ErrCorrupt is a whole answer to a read whose body is no variant of the
// object: the gateway returned other bytes, or another length, than any
// write put there.
var ErrCorrupt = errors.New("object body is not what was written")

// checker checks bodies read from the gateway against the pattern; buf is
// its reading buffer, one client's.
type checker struct {
	pattern []byte
	size    int
	head    [headerBytes]byte
	buf     []byte
}

// readChunk bounds a checker's buffer: bodies are read and compared a
// chunk at a time, whatever object_size is.
const readChunk = 64 << 10

func newChecker(pattern []byte, size int) *checker {
	return &checker{pattern: pattern, size: size, buf: make([]byte, min(size, readChunk))}
}

// check reads r to its end and compares it with the variant its header
// names. A body of the wrong length or bytes is ErrCorrupt; an error of r
// (a connection cut off) is returned as is, and says nothing of the data.
func (c *checker) check(r io.Reader) error {
	n, eof, err := fill(r, c.head[:])
	if err != nil {
		return err
	}
	if n < headerBytes {
		return fmt.Errorf("%w: %d bytes, want %d", ErrCorrupt, n, c.size)
	}
	v := binary.LittleEndian.Uint64(c.head[:])
	if v >= variants {
		return fmt.Errorf("%w: header %#x names no variant (0 to %d)", ErrCorrupt, v, variants-1)
	}
	want := c.pattern[v : int(v)+c.size-headerBytes]
	pos := 0
	for !eof {
		if n, eof, err = fill(r, c.buf); err != nil {
			return err
		}
		if pos+n > len(want) {
			return fmt.Errorf("%w: more than %d bytes", ErrCorrupt, c.size)
		}
		if !bytes.Equal(c.buf[:n], want[pos:pos+n]) {
			return fmt.Errorf("%w: variant %d differs within bytes %d..%d", ErrCorrupt, v, headerBytes+pos, headerBytes+pos+n-1)
		}
		pos += n
	}
	if pos != len(want) {
		return fmt.Errorf("%w: %d bytes, want %d", ErrCorrupt, headerBytes+pos, c.size)
	}
	return nil
}

// fill reads into b until it is full or r ends (eof, with no error).
func fill(r io.Reader, b []byte) (n int, eof bool, err error) {
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err == io.EOF {
			return n, true, nil
		}
		if err != nil {
			return n, false, err
		}
	}
	return n, false, nil
}
