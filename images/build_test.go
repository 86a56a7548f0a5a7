package images

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func filesRecipe() Recipe {
	return Recipe{
		Name: "tierbench.local/filestest:1",
		Files: []File{
			{Path: "/usr/local/bin/hello", Mode: 0o755, Data: []byte("#!/bin/sh\necho hello\n")},
			{Path: "/etc/app/app.conf", Data: []byte("a = 1\n")},
			{Path: "/tmp", Mode: os.ModeDir | os.ModeSticky | 0o777},
			{Path: "/bin", Mode: os.ModeSymlink, Data: []byte("usr/local/bin")},
		},
		Config: Config{
			Entrypoint: []string{"hello"},
			Cmd:        []string{"world"},
			Env:        []string{"PATH=/usr/local/bin"},
			User:       "65532:65532",
			WorkingDir: "/tmp",
		},
	}
}

// archive is a docker archive read back: its manifest, config, and
// layer's bytes.
type archive struct {
	manifest   []manifestEntry
	configName string
	config     imageConfig
	layerName  string
	layer      []byte
}

func readArchive(t *testing.T, path string) archive {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[hdr.Name] = b
		}
	}
	var a archive
	if err := json.Unmarshal(files["manifest.json"], &a.manifest); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	if len(a.manifest) != 1 || len(a.manifest[0].Layers) != 1 {
		t.Fatalf("manifest: %+v, want one image of one layer", a.manifest)
	}
	a.configName, a.layerName = a.manifest[0].Config, a.manifest[0].Layers[0]
	if err := json.Unmarshal(files[a.configName], &a.config); err != nil {
		t.Fatalf("config %s: %v", a.configName, err)
	}
	if sum := sha256.Sum256(files[a.configName]); hex.EncodeToString(sum[:])+".json" != a.configName {
		t.Errorf("config is named %s, not after its sha256", a.configName)
	}
	a.layer = files[a.layerName]
	if a.layer == nil {
		t.Fatalf("no layer %s in the archive", a.layerName)
	}
	return a
}

// layerEntries lists a layer's headers by name.
func layerEntries(t *testing.T, layer []byte) (map[string]*tar.Header, map[string][]byte) {
	t.Helper()
	hdrs, data := map[string]*tar.Header{}, map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(layer))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return hdrs, data
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, dup := hdrs[hdr.Name]; dup {
			t.Errorf("layer has %s twice", hdr.Name)
		}
		hdrs[hdr.Name] = hdr
		data[hdr.Name], _ = io.ReadAll(tr)
	}
}

func TestBuildFilesOnly(t *testing.T) {
	ctx := context.Background()
	cache := t.TempDir()
	r := filesRecipe()
	path, err := Build(ctx, r, cache)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(cache, "tierbench.local_filestest_1-"+r.Key()+".tar"); path != want {
		t.Errorf("tarball at %s, want %s", path, want)
	}
	a := readArchive(t, path)
	if got := a.manifest[0].RepoTags; !slices.Equal(got, []string{r.Name}) {
		t.Errorf("RepoTags %q, want %q", got, r.Name)
	}
	sum := sha256.Sum256(a.layer)
	layerSum := hex.EncodeToString(sum[:])
	if a.layerName != layerSum+"/layer.tar" {
		t.Errorf("layer is named %s, not after its sha256 %s", a.layerName, layerSum)
	}
	c := a.config
	if c.Architecture != "amd64" || c.OS != "linux" {
		t.Errorf("platform %s/%s, want linux/amd64", c.OS, c.Architecture)
	}
	if c.RootFS.Type != "layers" || !slices.Equal(c.RootFS.DiffIDs, []string{"sha256:" + layerSum}) {
		t.Errorf("rootfs %+v, want the layer's sha256 %s", c.RootFS, layerSum)
	}
	want := containerConf{Entrypoint: []string{"hello"}, Cmd: []string{"world"}, Env: []string{"PATH=/usr/local/bin"}, User: "65532:65532", WorkingDir: "/tmp"}
	if gj, _ := json.Marshal(c.Config); string(gj) != string(must(json.Marshal(want))) {
		t.Errorf("config %s, want %s", gj, must(json.Marshal(want)))
	}

	hdrs, data := layerEntries(t, a.layer)
	type entry struct {
		typ  byte
		mode int64
	}
	wantEntries := map[string]entry{
		"bin":                 {tar.TypeSymlink, 0o777},
		"etc/":                {tar.TypeDir, 0o755},
		"etc/app/":            {tar.TypeDir, 0o755},
		"etc/app/app.conf":    {tar.TypeReg, 0o644},
		"tmp/":                {tar.TypeDir, 0o1777},
		"usr/":                {tar.TypeDir, 0o755},
		"usr/local/":          {tar.TypeDir, 0o755},
		"usr/local/bin/":      {tar.TypeDir, 0o755},
		"usr/local/bin/hello": {tar.TypeReg, 0o755},
	}
	for name, w := range wantEntries {
		h, ok := hdrs[name]
		if !ok {
			t.Errorf("layer lacks %s", name)
			continue
		}
		if h.Typeflag != w.typ || h.Mode != w.mode || h.Uid != 0 || h.Gid != 0 {
			t.Errorf("%s: type %c mode %o owner %d:%d, want type %c mode %o owner 0:0", name, h.Typeflag, h.Mode, h.Uid, h.Gid, w.typ, w.mode)
		}
	}
	if len(hdrs) != len(wantEntries) {
		t.Errorf("layer has %d entries, want %d", len(hdrs), len(wantEntries))
	}
	if hdrs["bin"].Linkname != "usr/local/bin" {
		t.Errorf("bin links to %q", hdrs["bin"].Linkname)
	}
	if string(data["usr/local/bin/hello"]) != "#!/bin/sh\necho hello\n" {
		t.Errorf("hello holds %q", data["usr/local/bin/hello"])
	}
	// Parents come before what they hold.
	var order []string
	tr := tar.NewReader(bytes.NewReader(a.layer))
	for hdr, err := tr.Next(); err == nil; hdr, err = tr.Next() {
		order = append(order, hdr.Name)
	}
	for i, name := range order {
		for _, p := range parents(tarName(name)) {
			if j := slices.Index(order, p+"/"); j < 0 || j > i {
				t.Errorf("%s comes before its folder %s", name, p)
			}
		}
	}

	// The second build is the first's tarball, untouched.
	before, _ := os.Stat(path)
	start := time.Now()
	again, err := Build(ctx, r, cache)
	if err != nil || again != path {
		t.Fatalf("second Build: %s, %v; want %s", again, err, path)
	}
	after, _ := os.Stat(path)
	if !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("second Build rewrote the tarball")
	}
	t.Logf("cached Build took %s", time.Since(start))
	entries, _ := os.ReadDir(cache)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".build-") {
			t.Errorf("the build left %s", e.Name())
		}
	}

	// The same recipe makes the same bytes (the image id is stable).
	other := t.TempDir()
	same, err := Build(ctx, r, other)
	if err != nil {
		t.Fatal(err)
	}
	if b1, b2 := must(os.ReadFile(path)), must(os.ReadFile(same)); !bytes.Equal(b1, b2) {
		t.Errorf("two builds of one recipe differ")
	}

	// Any change is another key.
	keys := map[string]string{r.Key(): "base"}
	changes := map[string]func(*Recipe){
		"name":     func(r *Recipe) { r.Name += "x" },
		"data":     func(r *Recipe) { r.Files[0].Data = []byte("other") },
		"mode":     func(r *Recipe) { r.Files[1].Mode = 0o600 },
		"path":     func(r *Recipe) { r.Files[1].Path = "/etc/app/other.conf" },
		"cmd":      func(r *Recipe) { r.Config.Cmd = []string{"wor", "ld"} },
		"user":     func(r *Recipe) { r.Config.User = "0" },
		"env":      func(r *Recipe) { r.Config.Env = nil },
		"workdir":  func(r *Recipe) { r.Config.WorkingDir = "/" },
		"entry":    func(r *Recipe) { r.Config.Entrypoint = nil },
		"suite":    func(r *Recipe) { r.Suite = "bookworm" },
		"packages": func(r *Recipe) { r.Packages = []string{"hello"} },
		"hooks":    func(r *Recipe) { r.Hooks = []string{"true"} },
	}
	for what, change := range changes {
		c := filesRecipe()
		change(&c)
		k := c.Key()
		if prev, dup := keys[k]; dup {
			t.Errorf("changing %s gives the key of %s", what, prev)
		}
		keys[k] = what
	}
	changed := filesRecipe()
	changed.Files[0].Data = []byte("#!/bin/sh\necho bye\n")
	path2, err := Build(ctx, changed, cache)
	if err != nil {
		t.Fatal(err)
	}
	if path2 == path {
		t.Errorf("a changed recipe reused %s", path)
	}
}

func TestBuildRejects(t *testing.T) {
	cache := t.TempDir()
	bad := map[string]Recipe{
		"no name":       {Files: []File{{Path: "/a"}}},
		"relative path": {Name: "x:1", Files: []File{{Path: "a"}}},
		"unclean path":  {Name: "x:1", Files: []File{{Path: "/a/../b"}}},
		"twice":         {Name: "x:1", Files: []File{{Path: "/a"}, {Path: "/a"}}},
		"device":        {Name: "x:1", Files: []File{{Path: "/a", Mode: os.ModeDevice}}},
		"no suite":      {Name: "x:1", Packages: []string{"hello"}},
	}
	for what, r := range bad {
		if _, err := Build(context.Background(), r, cache); err == nil {
			t.Errorf("%s: Build took it", what)
		}
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 0 {
		t.Errorf("rejected builds left %d entries", len(entries))
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
