package kube

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestEngineDown reads engine pods as the API server returns them after
// the engine went down under load and checks that the run's failure
// names how: the OOM killer at the pod's memory limit (exit 137,
// OOMKilled), at the node's with no limit of its own (137, Error), an
// eviction, a stop; a pod that is up is not down. The same words end a
// pod that died before it was ready (describe) and one that keeps
// crashing (cannotStart).
func TestEngineDown(t *testing.T) {
	engine := func(limit, phase, state string, restarts int, last string) string {
		resources := `{}`
		if limit != "" {
			resources = `{"requests": {"memory": "` + limit + `"}, "limits": {"memory": "` + limit + `"}}`
		}
		if last == "" {
			last = `{}`
		}
		return `{"metadata": {"name": "tb-r1-engine", "namespace": "ns"},
			"spec": {"nodeName": "n1", "containers": [{"name": "opensearch", "resources": ` + resources + `}]},
			"status": {"phase": "` + phase + `", "containerStatuses": [{"name": "opensearch", "restartCount": ` + strconv.Itoa(restarts) + `,
				"state": ` + state + `, "lastState": ` + last + `}]}}`
	}
	ended := func(code int, reason string) string {
		return `{"terminated": {"exitCode": ` + strconv.Itoa(code) + `, "reason": "` + reason + `"}}`
	}
	const running = `{"running": {"startedAt": "2026-12-07T06:00:00Z"}}`
	for _, tc := range []struct {
		name, pod string
		want      []string // in the error; none: the pod is up
		not       []string
	}{
		{"OOM killed at its limit", engine("1610612736", "Failed", ended(137, "OOMKilled"), 0, ""),
			[]string{"pod tb-r1-engine: container opensearch ended with exit code 137: OOMKilled", "OOM killer killed it at its memory limit of 1.5 GiB", "heap", "raise memory"},
			[]string{"no memory limit"}},
		{"OOM killed with no limit", engine("", "Failed", ended(137, "OOMKilled"), 0, ""),
			[]string{"exit code 137: OOMKilled", "OOM killer", "no memory limit", "give the study a memory setting"}, nil},
		{"SIGKILL, no limit", engine("", "Failed", ended(137, "Error"), 0, ""),
			[]string{"exit code 137: Error", "SIGKILL (128+9)", "node's OOM killer", "no memory limit", "first the kernel's OOM killer picks"}, nil},
		{"SIGKILL under a limit", engine("2Gi", "Failed", ended(137, "Error"), 0, ""),
			[]string{"exit code 137: Error", "SIGKILL (128+9), not at a memory limit of its own"}, []string{"no memory limit"}},
		{"signal given", engine("", "Failed", `{"terminated": {"exitCode": 0, "signal": 9, "reason": "Error"}}`, 0, ""),
			[]string{"SIGKILL"}, nil},
		{"evicted", `{"metadata": {"name": "tb-r1-engine"}, "status": {"phase": "Failed", "reason": "Evicted",
			"message": "The node was low on resource: memory. Threshold quantity: 100Mi, available: 92Mi.",
			"containerStatuses": [{"name": "opensearch", "state": {"terminated": {"exitCode": 137, "reason": "Error"}}}]}}`,
			[]string{"pod tb-r1-engine Evicted: The node was low on resource: memory", "exit code 137"}, nil},
		{"stopped", engine("", "Failed", ended(143, "Error"), 0, ""), []string{"exit code 143: Error", "SIGTERM (128+15)"}, []string{"OOM"}},
		{"exited", engine("", "Failed", ended(1, "Error"), 0, ""), []string{"ended with exit code 1: Error"}, []string{"OOM", "SIG"}},
		// The termination message, the log's last lines, comes after the
		// cause, which a long log would otherwise bury.
		{"OOM killed, with its log", engine("64Mi", "Failed", `{"terminated": {"exitCode": 137, "reason": "OOMKilled", "message": "Ready to accept connections"}}`, 0, ""),
			[]string{"exit code 137: OOMKilled (the kernel's OOM killer killed it at its memory limit of 64Mi, the study's memory", "or caches) Ready to accept connections"}, nil},
		{"restarted after an OOM kill", engine("1073741824", "Running", running, 2, ended(137, "OOMKilled")),
			[]string{"container opensearch restarted 2 times, last with exit code 137: OOMKilled", "memory limit of 1.0 GiB"}, nil},
		{"up", engine("1073741824", "Running", running, 0, ""), nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p pod
			if err := json.Unmarshal([]byte(tc.pod), &p); err != nil {
				t.Fatal(err)
			}
			err := p.down()
			if len(tc.want) == 0 {
				if err != nil {
					t.Errorf("a pod that is up is down: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("not down")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not say %q", err, w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(err.Error(), n) {
					t.Errorf("%q says %q", err, n)
				}
			}
		})
	}

	// The engine killed before it was ready, and one that keeps being
	// killed, say the same.
	var p pod
	if err := json.Unmarshal([]byte(engine("1610612736", "Failed", ended(137, "OOMKilled"), 0, "")), &p); err != nil {
		t.Fatal(err)
	}
	if d := p.describe(); !strings.Contains(d, "container opensearch ended with exit code 137: OOMKilled (the kernel's OOM killer killed it at its memory limit of 1.5 GiB") {
		t.Errorf("describe: %s", d)
	}
	crashing := engine("1610612736", "Running", `{"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 10s"}}`, 3, ended(137, "OOMKilled"))
	p = pod{}
	if err := json.Unmarshal([]byte(crashing), &p); err != nil {
		t.Fatal(err)
	}
	if why := p.cannotStart(time.Now()); !strings.Contains(why, "restarted 3 times, last with exit code 137: OOMKilled (the kernel's OOM killer killed it at its memory limit of 1.5 GiB") {
		t.Errorf("cannotStart: %s", why)
	}
}
