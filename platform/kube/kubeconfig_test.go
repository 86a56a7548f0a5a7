package kube

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConnectRefusesWhatIsNotAKubeconfig checks that a file of another kind
// is refused in one line naming the file, not with a decoding error.
func TestConnectRefusesWhatIsNotAKubeconfig(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"study.yaml": "name: demo\nengine: pebble\n",
		"broken":     "apiVersion: v1\nkind: Config\nclusters: [\n",
		"empty":      "",
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Connect(path, "")
		if err == nil || !strings.Contains(err.Error(), path+" is not a kubeconfig file") || strings.Contains(err.Error(), "json") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
