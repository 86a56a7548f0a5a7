// Package logtail reads the end of a log, and keeps the end of a
// program's output as it is written (Writer): the lines that explain why a
// server, a tool or a helper program failed. host/proc, the engines, the
// tiers and the tools quote them in errors.
package logtail

import (
	"bytes"
	"io"
	"os"
)

// maxBytes bounds how much of a log File reads: its end is what explains.
const maxBytes = 64 << 10

// File returns the last n lines of the file at path (of its last 64KiB),
// or a note saying why there are none.
func File(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > maxBytes {
		if _, err := f.Seek(-maxBytes, io.SeekEnd); err != nil {
			return "(log unreadable: " + err.Error() + ")"
		}
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return "(log unreadable: " + err.Error() + ")"
	}
	return Lines(b, n)
}

// Lines returns the last n lines of b.
func Lines(b []byte, n int) string {
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
