package report

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestPrintedBracketsBesideVerdicts reads every table row of the Markdown
// report of fixtures with decided and undecided comparisons: a ratio's
// bracket excludes 1 exactly when the verdict beside it is better or
// worse, never beside an inconclusive or equivalent one.
func TestPrintedBracketsBesideVerdicts(t *testing.T) {
	bracket := regexp.MustCompile(`^(\d+\.\d+)-(\d+\.\d+)x$`)
	total := map[string]int{}
	for _, c := range []struct {
		name string
		opts func() fixtureOpts
	}{
		{"the fixture", defaultOpts},
		{"two rounds", func() fixtureOpts { o := defaultOpts(); o.repeat = 2; return o }},
		{"five rounds", func() fixtureOpts { o := defaultOpts(); o.repeat = 5; return o }},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			if err := Markdown(&b, newFixture(c.opts()).input(), filepath.Join(t.TempDir(), "c"), "c/"); err != nil {
				t.Fatal(err)
			}
			seen := map[string]int{}
			for _, line := range strings.Split(b.String(), "\n") {
				cells := strings.Split(line, "|")
				for i := 0; i+1 < len(cells); i++ {
					m := bracket.FindStringSubmatch(strings.TrimSpace(cells[i]))
					if m == nil {
						continue
					}
					lo, _ := strconv.ParseFloat(m[1], 64)
					hi, _ := strconv.ParseFloat(m[2], 64)
					verdict := strings.TrimSpace(cells[i+1])
					excludes := lo > 1 || hi < 1
					decided := verdict == "better" || verdict == "worse"
					seen[verdict]++
					total[verdict]++
					if excludes != decided {
						t.Errorf("[%g-%g] beside %q: %s", lo, hi, verdict, line)
					}
				}
			}
			t.Logf("brackets checked beside %v", seen)
			if len(seen) == 0 {
				t.Error("no bracket printed")
			}
		})
	}
	if total["better"] == 0 || total["inconclusive"] == 0 {
		t.Errorf("the fixtures should print better and inconclusive rows, printed %v", total)
	}
}
