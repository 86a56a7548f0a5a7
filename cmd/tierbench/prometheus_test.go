package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/host/tcpport"
	"github.com/tierbench/tierbench/testenv"
)

// TestPrometheusRunsTheDashboard watches a study live with a real
// Prometheus: it scrapes `run --metrics` every second while a pebble study
// runs, and afterwards every query of the Grafana dashboard
// (docs/grafana/tierbench-live.json), its variables filled as Grafana
// would, is run against it over the study's time: each panel's query is
// valid PromQL and returns the series the panel draws. The errors panel
// may be empty (the study has no errors), and the tier panels when the
// disk tier has no device.
func TestPrometheusRunsTheDashboard(t *testing.T) {
	promBin, err := exec.LookPath("prometheus")
	if err != nil {
		testenv.Skip(t, "prometheus is not installed (scripts/setup.sh installs it)")
	}
	work := t.TempDir()
	ram, disk := ramDir(t), filepath.Join(work, "disk")
	st := writeStudy(t, work, fmt.Sprintf(metricsStudy, ram, disk))
	ports, err := tcpport.FreeN(2)
	if err != nil {
		t.Fatal(err)
	}
	metricsAddr, promAddr := fmt.Sprintf("127.0.0.1:%d", ports[0]), fmt.Sprintf("127.0.0.1:%d", ports[1])
	config := filepath.Join(work, "prometheus.yml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: tierbench
    static_configs: [{targets: [%q]}]
`, metricsAddr)), 0o644); err != nil {
		t.Fatal(err)
	}
	prom := exec.Command(promBin, "--config.file="+config, "--storage.tsdb.path="+filepath.Join(work, "tsdb"), "--web.listen-address="+promAddr)
	var promLog strings.Builder
	prom.Stdout, prom.Stderr = &promLog, &promLog
	if err := prom.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = prom.Process.Kill()
		_ = prom.Wait()
	}()
	api := "http://" + promAddr + "/api/v1/"
	waitReady(t, "http://"+promAddr+"/-/ready", &promLog)

	began := time.Now()
	run := exec.Command(binary, "run", st, "--results", filepath.Join(work, "results"), "--metrics", metricsAddr)
	run.Dir = work
	run.Env = append(os.Environ(), "TIERBENCH_STATE_DIR="+filepath.Join(work, "state"))
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	ended := time.Now()
	time.Sleep(2 * time.Second) // the last scrape lands

	b, err := os.ReadFile("../../docs/grafana/tierbench-live.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	// Grafana's variables: every study and placement; $__rate_interval is
	// four scrape intervals.
	fill := strings.NewReplacer(`"$study"`, `".+"`, `"$placement"`, `".+"`, "$__rate_interval", "4s")
	tierOK := deviceOf(t, disk)
	queried := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			expr := fill.Replace(tg.Expr)
			series, err := queryRange(api, expr, began, ended)
			queried++
			switch {
			case err != nil:
				t.Errorf("panel %q: %s: %v", p.Title, expr, err)
			case series > 0:
				t.Logf("panel %q: %d series", p.Title, series)
			case strings.Contains(expr, "errors_total"), strings.Contains(expr, "tierbench_tier_") && !tierOK:
				t.Logf("panel %q: empty, as it may be here", p.Title)
			default:
				t.Errorf("panel %q: %s returned no series over the study", p.Title, expr)
			}
		}
	}
	if queried == 0 {
		t.Fatal("the dashboard has no queries")
	}
}

// waitReady polls a readiness URL for up to 30 s.
func waitReady(t *testing.T, u string, log fmt.Stringer) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if resp, err := http.Get(u); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
	}
	t.Fatalf("prometheus not ready at %s:\n%s", u, log)
}

// queryRange runs a PromQL range query over [from, to] at 1 s steps and
// counts the series with a value.
func queryRange(api, expr string, from, to time.Time) (int, error) {
	q := url.Values{"query": {expr}, "start": {fmt.Sprint(from.Unix())}, "end": {fmt.Sprint(to.Unix() + 1)}, "step": {"1"}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, api+"query_range?"+q.Encode(), nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string
		Error  string
		Data   struct {
			Result []struct {
				Values [][2]any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, err
	}
	if body.Status != "success" {
		return 0, fmt.Errorf("prometheus: %s", body.Error)
	}
	n := 0
	for _, r := range body.Data.Result {
		for _, v := range r.Values {
			if s, ok := v[1].(string); ok && s != "NaN" {
				n++
				break
			}
		}
	}
	return n, nil
}
