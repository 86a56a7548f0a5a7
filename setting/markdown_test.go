package setting

import "testing"

func TestMarkdown(t *testing.T) {
	const head = "| option | kind | default | range | what it sets |\n| --- | --- | --- | --- | --- |\n"
	for _, tc := range []struct {
		name  string
		decls []Setting
		want  string
	}{
		{"none", nil, head},
		{"memory size with a minimum",
			[]Setting{{Name: "cache", Kind: Size, Memory: true, Default: "64MiB", Min: "2MiB", Doc: "block cache"}},
			head + "| `cache` | size (memory) | `64MiB` | at least 2MiB | block cache |\n"},
		{"unset, no range",
			[]Setting{{Name: "seed", Kind: Int, Doc: "random seed"}},
			head + "| `seed` | int | unset |  | random seed |\n"},
		{"range with a unit",
			[]Setting{{Name: "checkpoint_timeout", Kind: Int, Default: "300", Min: "30", Max: "86400", Unit: "seconds", Doc: "time between checkpoints"}},
			head + "| `checkpoint_timeout` | int | `300` | from 30 to 86400 seconds | time between checkpoints |\n"},
		{"enum",
			[]Setting{{Name: "media", Kind: Enum, Default: "ssd", Values: []string{"ssd", "hdd"}, Doc: "device class"}},
			head + "| `media` | enum | `ssd` | one of ssd, hdd | device class |\n"},
		{"pipes escaped, lines joined",
			[]Setting{{Name: "queries", Kind: String, Default: "a|b", Doc: "all | a list\n  such as 1,3"}},
			head + "| `queries` | string | `a\\|b` |  | all \\| a list such as 1,3 |\n"},
		{"backticks in a default",
			[]Setting{{Name: "quote", Kind: String, Default: "`x`", Doc: "text"}},
			head + "| `quote` | string | `` `x` `` |  | text |\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Markdown(tc.decls, "option"); got != tc.want {
				t.Errorf("Markdown:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
	if got, want := Markdown(nil, "parameter")[:13], "| parameter |"; got != want {
		t.Errorf("header starts %q, want %q", got, want)
	}
}
