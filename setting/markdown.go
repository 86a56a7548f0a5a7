package setting

import "strings"

// Markdown renders decls as a Markdown table for the docs: one row per
// setting with its name, kind, default, range and doc, headed
// | noun | kind | default | range | what it sets |. The docs' tables of
// engine options and workload parameters are made by it (go test ./catalog
// -run Docs -update), so they say what Parse checks.
func Markdown(decls []Setting, noun string) string {
	var b strings.Builder
	row := func(cells ...string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + c + " |")
		}
		b.WriteString("\n")
	}
	row(cell(noun), "kind", "default", "range", "what it sets")
	row("---", "---", "---", "---", "---")
	for _, d := range decls {
		kind := string(d.Kind)
		if d.Memory {
			kind += " (memory)"
		}
		def := "unset"
		if d.Default != "" {
			def = codeSpan(d.Default)
		}
		row(codeSpan(d.Name), cell(kind), def, cell(d.Range()), cell(d.Doc))
	}
	return b.String()
}

// cell makes text safe in a table cell: on one line, its pipes escaped.
func cell(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	return strings.ReplaceAll(text, "|", `\|`)
}

// codeSpan writes text as a code span in a table cell, fenced by a run of
// backticks longer than any in it.
func codeSpan(text string) string {
	text = cell(text)
	longest, run := 0, 0
	for _, r := range text {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	ticks := strings.Repeat("`", longest+1)
	if strings.HasPrefix(text, "`") || strings.HasSuffix(text, "`") {
		text = " " + text + " "
	}
	return ticks + text + ticks
}
