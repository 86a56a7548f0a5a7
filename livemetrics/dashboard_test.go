package livemetrics

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestGrafanaDashboard keeps docs/grafana/tierbench-live.json true to what
// is served: every metric its queries name is one Metrics serves (a
// histogram's _bucket, _sum and _count series included), and every label
// its queries group, select or print by is one of that metric's.
func TestGrafanaDashboard(t *testing.T) {
	b, err := os.ReadFile("../docs/grafana/tierbench-live.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr, LegendFormat string }
		}
		Templating struct{ List []struct{ Definition string } }
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	served := servedLabels()
	name := regexp.MustCompile(`tierbench_[a-z_]+`)
	inBraces := regexp.MustCompile(`\{([^}]*)\}`)
	grouped := regexp.MustCompile(`by \(([^)]*)\)`)
	word := regexp.MustCompile(`[a-z_]+`)
	check := func(where, expr, legend string) {
		var labels []string
		for _, m := range inBraces.FindAllStringSubmatch(expr+" "+legend, -1) {
			for _, sel := range strings.Split(m[1], ",") {
				if l := word.FindString(strings.TrimSpace(sel)); l != "" {
					labels = append(labels, l)
				}
			}
		}
		for _, m := range grouped.FindAllStringSubmatch(expr, -1) {
			labels = append(labels, word.FindAllString(m[1], -1)...)
		}
		names := name.FindAllString(expr, -1)
		if len(names) == 0 {
			t.Errorf("%s: %q names no tierbench metric", where, expr)
		}
		for _, n := range names {
			have, ok := served[n]
			if !ok {
				t.Errorf("%s: %s is not served", where, n)
				continue
			}
			for _, l := range labels {
				if l != "le" && !have[l] {
					t.Errorf("%s: %s has no label %q (it has %v)", where, n, l, have)
				}
			}
		}
	}
	n := 0
	for _, p := range dash.Panels {
		for _, q := range p.Targets {
			check("panel "+p.Title, q.Expr, q.LegendFormat)
			n++
		}
	}
	for _, v := range dash.Templating.List {
		if v.Definition != "" {
			check("variable", v.Definition, "")
		}
	}
	if n < 10 {
		t.Errorf("%d queries in the dashboard: is it read right?", n)
	}
}

// servedLabels is the label names of each series name Metrics serves.
func servedLabels() map[string]map[string]bool {
	ch := make(chan *prometheus.Desc, 100)
	New().Describe(ch)
	close(ch)
	re := regexp.MustCompile(`fqName: "([^"]+)".*variableLabels: \[([^\]]*)\]`)
	out := map[string]map[string]bool{}
	for d := range ch {
		m := re.FindStringSubmatch(d.String())
		labels := map[string]bool{}
		// Printed as [a b] or, with constraints, [{a <nil>} {b <nil>}].
		for _, l := range strings.Fields(strings.NewReplacer("{", " ", "}", " ", "<nil>", " ").Replace(m[2])) {
			labels[l] = true
		}
		out[m[1]] = labels
		if m[1] == "tierbench_latency_seconds" {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				out[m[1]+s] = labels
			}
		}
	}
	return out
}
