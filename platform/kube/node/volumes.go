package node

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/tierbench/tierbench/platform/kube"
)

// Class is a storage class the node serves from one of the study's
// tiers: local volumes, folders on the tier.
type Class struct {
	Name string `json:"name"` // the tier's name
	Path string `json:"path"` // where the tier is on this machine
	// Durable and Note are the tier's label (tmpfs is not durable).
	Durable bool   `json:"durable"`
	Note    string `json:"note,omitempty"`
	// Capacity is each volume's announced size: the tier's size (its
	// volumes share it).
	Capacity int64 `json:"capacity"`
}

// labelVolume marks the node's volumes, which the recycler resets.
const labelVolume = "tierbench.io/node-volume"

// volumePath is volume i's folder on a class's tier.
func volumePath(c Class, i int) string { return filepath.Join(c.Path, fmt.Sprintf("pv-%d", i)) }

func volumeName(c Class, i int) string { return fmt.Sprintf("%s-pv-%d", c.Name, i) }

// createClass creates c's StorageClass (no provisioner, bound when the
// first pod using a claim is scheduled, as local volumes must be) and n
// local volumes on it.
func createClass(ctx context.Context, api *kube.Cluster, c Class, n int) error {
	sc := map[string]any{
		"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
		"metadata":          map[string]any{"name": c.Name, "labels": map[string]any{"app.kubernetes.io/managed-by": "tierbench"}},
		"provisioner":       "kubernetes.io/no-provisioner",
		"volumeBindingMode": "WaitForFirstConsumer",
	}
	if err := api.Do(ctx, http.MethodPost, "/apis/storage.k8s.io/v1/storageclasses", sc, nil); err != nil {
		return fmt.Errorf("storage class %s: %w", c.Name, err)
	}
	for i := range n {
		dir := volumePath(c, i)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("volume %s: %w", dir, err)
		}
		pv := map[string]any{
			"apiVersion": "v1", "kind": "PersistentVolume",
			"metadata": map[string]any{"name": volumeName(c, i), "labels": map[string]any{labelVolume: c.Name, "app.kubernetes.io/managed-by": "tierbench"}},
			"spec": map[string]any{
				"storageClassName":              c.Name,
				"capacity":                      map[string]any{"storage": fmt.Sprint(c.Capacity)},
				"accessModes":                   []any{"ReadWriteOnce"},
				"volumeMode":                    "Filesystem",
				"persistentVolumeReclaimPolicy": "Retain",
				"local":                         map[string]any{"path": dir},
				"nodeAffinity": map[string]any{"required": map[string]any{"nodeSelectorTerms": []any{map[string]any{
					"matchExpressions": []any{map[string]any{"key": "kubernetes.io/hostname", "operator": "In", "values": []any{NodeName}}},
				}}}},
			},
		}
		if err := api.Do(ctx, http.MethodPost, "/api/v1/persistentvolumes", pv, nil); err != nil {
			return fmt.Errorf("volume %s: %w", volumeName(c, i), err)
		}
	}
	return nil
}

// recycle makes every released volume of the node available again with
// an empty folder, as the local static provisioner does: a run's claims
// are deleted after the run, and the next run needs fresh volumes.
func recycle(ctx context.Context, api *kube.Cluster) error {
	var list struct {
		Items []map[string]any `json:"items"`
	}
	if err := api.Do(ctx, http.MethodGet, "/api/v1/persistentvolumes?labelSelector="+labelVolume, nil, &list); err != nil {
		return err
	}
	for _, pv := range list.Items {
		status, _ := pv["status"].(map[string]any)
		if status["phase"] != "Released" {
			continue
		}
		spec, _ := pv["spec"].(map[string]any)
		local, _ := spec["local"].(map[string]any)
		path, _ := local["path"].(string)
		if err := emptyFolder(path); err != nil {
			return err
		}
		delete(spec, "claimRef")
		name, _ := pv["metadata"].(map[string]any)["name"].(string)
		if err := api.Do(ctx, http.MethodPut, "/api/v1/persistentvolumes/"+name, pv, nil); err != nil {
			return fmt.Errorf("recycle volume %s: %w", name, err)
		}
	}
	return nil
}

// emptyFolder removes what a run left in a volume's folder and gives it
// back to root (the next pod's fsGroup owns it again).
func emptyFolder(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("empty volume %s: %w", dir, err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("empty volume %s: %w", dir, err)
		}
	}
	if err := os.Chown(dir, 0, 0); err != nil {
		return fmt.Errorf("empty volume %s: %w", dir, err)
	}
	return os.Chmod(dir, 0o755)
}
