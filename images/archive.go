package images

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
)

// imageConfig is the image's config in the docker/OCI format: what
// containerd's importer reads the platform from, and the CRI plugin the
// process defaults from.
type imageConfig struct {
	Architecture string         `json:"architecture"`
	OS           string         `json:"os"`
	Created      string         `json:"created"`
	Config       containerConf  `json:"config"`
	RootFS       rootFS         `json:"rootfs"`
	History      []historyEntry `json:"history,omitempty"`
}

type containerConf struct {
	Entrypoint []string `json:"Entrypoint,omitempty"`
	Cmd        []string `json:"Cmd,omitempty"`
	Env        []string `json:"Env,omitempty"`
	User       string   `json:"User,omitempty"`
	WorkingDir string   `json:"WorkingDir,omitempty"`
}

type rootFS struct {
	Type    string   `json:"type"`
	DiffIDs []string `json:"diff_ids"`
}

type historyEntry struct {
	Created   string `json:"created"`
	CreatedBy string `json:"created_by"`
}

// manifestEntry is one image in a docker archive's manifest.json.
type manifestEntry struct {
	Config   string
	RepoTags []string
	Layers   []string
}

// configJSON is r's image config over one layer whose sha256 is
// layerSum; its history names r's key. Its time is fixed, as the
// layer's Files are, so that the same recipe makes the same image id.
func configJSON(r Recipe, key, layerSum string) ([]byte, error) {
	created := fileTime.Format("2006-01-02T15:04:05Z")
	c := imageConfig{
		Architecture: runtime.GOARCH,
		OS:           "linux",
		Created:      created,
		Config: containerConf{
			Entrypoint: r.Config.Entrypoint,
			Cmd:        r.Config.Cmd,
			Env:        r.Config.Env,
			User:       r.Config.User,
			WorkingDir: r.Config.WorkingDir,
		},
		RootFS:  rootFS{Type: "layers", DiffIDs: []string{"sha256:" + layerSum}},
		History: []historyEntry{{Created: created, CreatedBy: "tierbench images " + key}},
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("image config: %w", err)
	}
	return b, nil
}

// writeArchive writes the docker archive of one image named name, with
// config and the layer in file layer (whose sha256 is layerSum), to
// out, and syncs it: a tarball is renamed into the cache only once it
// is all on disk.
func writeArchive(out, name string, config []byte, layer, layerSum string) (err error) {
	sum := sha256.Sum256(config)
	configName := hex.EncodeToString(sum[:]) + ".json"
	layerName := layerSum + "/layer.tar"
	manifest, err := json.Marshal([]manifestEntry{{Config: configName, RepoTags: []string{name}, Layers: []string{layerName}}})
	if err != nil {
		return fmt.Errorf("archive manifest: %w", err)
	}
	lf, err := os.Open(layer)
	if err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	defer lf.Close()
	st, err := lf.Stat()
	if err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	f, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("archive: %w", cerr)
		}
	}()
	tw := tar.NewWriter(f)
	put := func(name string, size int64, body io.Reader) error {
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: size, ModTime: fileTime}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err := io.Copy(tw, body)
		return err
	}
	err = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: layerSum + "/", Mode: 0o755, ModTime: fileTime})
	if err == nil {
		err = put(layerName, st.Size(), lf)
	}
	if err == nil {
		err = put(configName, int64(len(config)), bytes.NewReader(config))
	}
	if err == nil {
		err = put("manifest.json", int64(len(manifest)), bytes.NewReader(manifest))
	}
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		return fmt.Errorf("writing archive %s: %w", out, err)
	}
	return nil
}
