package images

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// Ctr reaches one containerd through its ctr command.
type Ctr struct {
	Address   string // containerd's socket
	Namespace string // "k8s.io": where the CRI plugin, and so the kubelet, looks
}

// Import loads a docker-archive tarball into containerd and unpacks it
// for the overlayfs snapshotter, the CRI plugin's: the plugin unpacks
// images when it pulls them, and a pod with imagePullPolicy: Never
// starts from the snapshot as it finds it. Importing an image again is
// harmless.
func (c Ctr) Import(ctx context.Context, tarball string) error {
	if _, err := c.Run(ctx, "images", "import", "--snapshotter", "overlayfs", tarball); err != nil {
		return fmt.Errorf("importing %s: %w", tarball, err)
	}
	return nil
}

// Has tells whether containerd has an image named name (a full
// reference, as Recipe.Name).
func (c Ctr) Has(ctx context.Context, name string) (bool, error) {
	out, err := c.Run(ctx, "images", "ls", "-q")
	if err != nil {
		return false, fmt.Errorf("listing images: %w", err)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.TrimSpace(line) == name {
			return true, nil
		}
	}
	return false, nil
}

// Run runs ctr with c's address and namespace, for what Import and Has
// do not cover (a test's ctr run); its error carries what ctr wrote on
// stderr.
func (c Ctr) Run(ctx context.Context, args ...string) (string, error) {
	full := []string{}
	if c.Address != "" {
		full = append(full, "--address", c.Address)
	}
	if c.Namespace != "" {
		full = append(full, "--namespace", c.Namespace)
	}
	full = append(full, args...)
	cmd := exec.CommandContext(ctx, "ctr", full...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("ctr %s: %w: %s", strings.Join(args[:min(2, len(args))], " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
