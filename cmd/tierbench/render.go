package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/tierbench/tierbench/catalog"
	"github.com/tierbench/tierbench/host/secrets"
	"github.com/tierbench/tierbench/platform/kube"
	"github.com/tierbench/tierbench/runner"
	"github.com/tierbench/tierbench/study"
)

func newRenderCmd() *cobra.Command {
	var platform, out string
	cmd := &cobra.Command{
		Use:   "render STUDY --platform kubernetes [--out DIR]",
		Short: "Write the Kubernetes manifests of every run of a study, for pipelines that apply them",
		Long: `render writes, for every run of a study on Kubernetes (platform:
kubernetes), the objects tierbench run would create: the run's ConfigMap,
a Secret with a fresh password, a claim per placed component from its
tier's storage class, the engine's pod, Service and NetworkPolicy, and the
load generator's Job running tierbench drive (its pod log holds the run's
figures as JSON lines). It contacts no cluster. Every object is labelled
with the study and run (tierbench.io/study, tierbench.io/run): delete a
run's objects with kubectl delete -l tierbench.io/run=ID on the kinds above.
Owner references are left out: they need the uid of an object that exists.

Without --out the manifests go to standard output, one YAML document per
object; with --out, DIR/run-NNN.yaml per run (mode 0600: they hold the
runs' passwords).`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			return render(catalog.Default(), a[0], platform, out, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&platform, "platform", "", "the platform to write manifests for: kubernetes")
	cmd.Flags().StringVar(&out, "out", "", "a folder to write run-NNN.yaml into (made if missing); standard output if empty")
	return cmd
}

// render checks everything, builds every run's manifest in memory, and
// only then writes: bad input writes nothing.
func render(cat *catalog.Catalog, path, platform, out string, stdout io.Writer) error {
	if platform != "kubernetes" {
		return badInput(fmt.Errorf("--platform %q: render writes manifests for a Kubernetes cluster; write --platform kubernetes", platform))
	}
	st, err := study.ParseFile(path, cat)
	if err != nil {
		return badInput(err)
	}
	if st.Kubernetes == nil {
		return badInput(fmt.Errorf("%s runs on this machine, so it has no manifests: add platform: {kubernetes: {namespace: NS, image: IMAGE}} and storage_class tiers", path))
	}
	if out != "" {
		if entries, err := os.ReadDir(out); err == nil && len(entries) > 0 {
			return badInput(fmt.Errorf("--out %s is a folder with files in it; name a new or empty folder", out))
		}
	}
	eng, _ := cat.Engine(st.Engine)
	wspec, _ := cat.Workload(st.Workload.Name)
	w, err := wspec.Build(st.Workload.Params)
	if err != nil {
		return badInput(fmt.Errorf("workload %s: %w", st.Workload.Name, err))
	}
	id := runner.NewStudyID(time.Now().UTC())
	var docs [][]byte
	for _, cell := range st.Matrix() {
		runID := runner.RunID(id, cell.Seq)
		spec, err := runner.RunSpec(st, eng, w, id, runID, cell)
		if err != nil {
			return badInput(fmt.Errorf("run %d: %w", cell.Seq, err))
		}
		password, err := secrets.New()
		if err != nil {
			return err
		}
		var b bytes.Buffer
		fmt.Fprintf(&b, "# tierbench run %s: placement %s, durability %s, %d clients, repeat %d (study %q)\n",
			runID, cell.Placement.Name, cell.Durability, cell.Clients, cell.Repeat, st.Name)
		for _, o := range append([]kube.Object{spec.Anchor()}, spec.Objects(password)...) {
			y, err := yaml.Marshal(map[string]any(o))
			if err != nil {
				return err
			}
			b.WriteString("---\n")
			b.Write(y)
		}
		docs = append(docs, b.Bytes())
	}
	if out == "" {
		for _, d := range docs {
			if _, err := stdout.Write(d); err != nil {
				return err
			}
		}
		return nil
	}
	if err := os.MkdirAll(out, 0o700); err != nil {
		return err
	}
	for i, d := range docs {
		if err := os.WriteFile(filepath.Join(out, fmt.Sprintf("run-%03d.yaml", i+1)), d, 0o600); err != nil { // cells are numbered from 1
			return err
		}
	}
	return nil
}
