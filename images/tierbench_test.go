package images

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeBinary stands for the tierbench binary.
func fakeBinary(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tierbench")
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPause(t *testing.T) {
	r, err := Pause(fakeBinary(t, "binary"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Name != "tierbench.local/pause:1" || !slices.Equal(r.Config.Entrypoint, []string{"/pause", "pause"}) {
		t.Errorf("pause: %s %q", r.Name, r.Config.Entrypoint)
	}
	if len(r.Files) != 1 || r.Files[0].Path != "/pause" || r.Files[0].Mode != 0o755 || string(r.Files[0].Data) != "binary" {
		t.Errorf("pause files: %+v", r.Files)
	}
	if _, err := Pause(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Errorf("Pause of a missing binary: no error")
	}
}

func TestTierbench(t *testing.T) {
	bin := fakeBinary(t, "binary")
	r, err := Tierbench(bin)
	if err != nil {
		t.Fatal(err)
	}
	// sha256("binary") begins 9a3a45d01531.
	if r.Name != "tierbench.local/tierbench:9a3a45d01531" {
		t.Errorf("name %s", r.Name)
	}
	other, _ := Tierbench(fakeBinary(t, "binary 2"))
	if other.Name == r.Name {
		t.Errorf("two binaries, one tag %s", r.Name)
	}
	if r.Config.User != "65532:65532" || !slices.Equal(r.Config.Entrypoint, []string{"tierbench"}) || !slices.Contains(r.Config.Env, "PATH=/usr/local/bin:/usr/bin:/bin") {
		t.Errorf("config %+v", r.Config)
	}
	path, err := Build(context.Background(), r, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	hdrs, data := layerEntries(t, readArchive(t, path).layer)
	if h := hdrs["usr/local/bin/tierbench"]; h == nil || h.Mode != 0o755 || string(data["usr/local/bin/tierbench"]) != "binary" {
		t.Errorf("binary: %+v", h)
	}
	if h := hdrs["tmp/"]; h == nil || h.Mode != 0o1777 {
		t.Errorf("/tmp: %+v", h)
	}
	if !strings.Contains(string(data["etc/passwd"]), "nonroot:x:65532:65532:nonroot:/home/nonroot:") {
		t.Errorf("passwd: %s", data["etc/passwd"])
	}
	if !strings.Contains(string(data["etc/group"]), "nonroot:x:65532:") {
		t.Errorf("group: %s", data["etc/group"])
	}
}
