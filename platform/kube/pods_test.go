package kube

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestCannotStart reads pods as the API server returns them and says
// which will not start without help, quoting the kubelet's or the
// scheduler's reason; a pod still on its way is left to its timeout.
func TestCannotStart(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	waiting := func(reason, msg string) string {
		return `{"metadata": {"name": "e", "namespace": "ns"}, "status": {"phase": "Pending", "containerStatuses": [{"name": "engine", "image": "tierbench.local/nosuch:1", "restartCount": 3,
			"state": {"waiting": {"reason": "` + reason + `", "message": "` + msg + `"}},
			"lastState": {"terminated": {"exitCode": 2, "reason": "Error"}}}]}}`
	}
	unscheduled := func(since time.Duration) string {
		return `{"metadata": {"name": "e"}, "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
			"message": "0/1 nodes are available: 1 Insufficient memory.", "lastTransitionTime": "` + now.Add(-since).Format(time.RFC3339) + `"}]}}`
	}
	for _, tc := range []struct {
		name, pod string
		want      []string // in the answer; none: the pod may still start
	}{
		{"image pull back-off", waiting("ImagePullBackOff", "Back-off pulling image"), []string{"tierbench.local/nosuch:1", "ImagePullBackOff", "engine_image", "cluster up"}},
		{"a first pull error may pass", waiting("ErrImagePull", "not found"), nil},
		{"crash loop", waiting("CrashLoopBackOff", "back-off 10s restarting failed container"), []string{"keeps crashing", "restarted 3 times", "exit code 2", "kubectl logs --previous -n ns e -c engine"}},
		{"config error", waiting("CreateContainerConfigError", "secret not found"), []string{"cannot be made", "secret not found"}},
		{"creating", waiting("ContainerCreating", ""), nil},
		{"unschedulable a moment", unscheduled(5 * time.Second), nil},
		{"unschedulable for good", unscheduled(time.Minute), []string{"no node has taken it for 1m0s", "Insufficient memory", "volume_size"}},
		{"running", `{"metadata": {"name": "e"}, "status": {"phase": "Running", "containerStatuses": [{"name": "engine", "state": {"running": {}}}]}}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p pod
			if err := json.Unmarshal([]byte(tc.pod), &p); err != nil {
				t.Fatal(err)
			}
			got := p.cannotStart(now)
			if len(tc.want) == 0 && got != "" {
				t.Errorf("gave up on a pod that may still start: %s", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q does not say %q", got, w)
				}
			}
		})
	}
}
