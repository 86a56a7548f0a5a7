package setting

import (
	"fmt"
	"io"
)

// Describe writes one line per setting for `tierbench engines` and
// `tierbench workloads`: name, kind, default, range and doc, so a listing
// shows exactly the limits Parse checks.
func Describe(w io.Writer, decls []Setting) {
	width := 12
	for _, d := range decls {
		width = max(width, len(d.Name))
	}
	for _, d := range decls {
		def := d.Default
		if def == "" {
			def = "(unset)"
		}
		line := fmt.Sprintf("    %-*s %-8s %-10s %s", width, d.Name, d.Kind, def, d.Doc)
		if r := d.Range(); r != "" {
			line += " [" + r + "]"
		}
		fmt.Fprintln(w, line)
	}
}
